"""A debugging loop blocks at most once (issue 22): after a fix block, or a fix stored, a later fix about the same
files, failing command or names defers to a reminder until the topic changes (gate/gates/writeback/fixguard.py,
rules/writeback.toml [fix_guard]) — through the real hook entry point, in fresh processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import support
from test_reminder_hooks import Hook, Session, audit

from gate.gates.writeback.fixguard import names, same_fix
from gate.rules import load_rules
from gate.session.ledger import Ledger

LEDGER_CAUSE = "The cause was ROUND_UP in ledger_total(); I switched it to ROUND_HALF_EVEN and the tests pass now."
AGAIN_CAUSE = "The cause was a second ROUND_UP in ledger_total(), in the refund branch; the tests pass now."
EXPORT_CAUSE = "The cause was an exclusive end in export_range(), so month_end was skipped; the tests pass now."


def fix(file: str, test: str) -> list[tuple[str, dict[str, Any], str]]:
    """A run that fails, an edit, the same run passing: a fix the turn itself confirmed."""
    return [
        ("Bash", {"command": f"pytest {test}"}, "1 failed, 11 passed"),
        ("Edit", {"file_path": file, "old_string": "a", "new_string": "b"}, f"The file {file} has been updated."),
        ("Bash", {"command": f"pytest {test}"}, "12 passed in 0.4s"),
    ]


LEDGER_FIX = fix("src/ledger.py", "tests/test_ledger.py")
EXPORT_FIX = fix("src/export.py", "tests/test_export.py")


def stops() -> list[dict[str, Any]]:
    return [r for r in audit() if r["event"] == "Stop"]


def blocked(out: str) -> bool:
    return support.stop_verdict(out) is not None


def test_a_loop_that_confirms_a_fix_each_turn_blocks_once_then_reminds(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))  # the loop's first fix blocks
    assert stops()[-1]["reason"] == "BLOCKED_WRITEBACK"
    s.prompt("still off by a cent on refunds")
    assert s.stop(AGAIN_CAUSE, tools=LEDGER_FIX) == ""  # the same loop: no second block ...
    last = stops()[-1]
    assert last["reason"] == "ALLOW_DEFERRED_SAME_FIX" and last["deferred"] == 2, last
    assert last["fix_guard"]["of"] == 1 and last["fix_guard"]["by"] == "files"
    assert last["fix_guard"]["shared"] == ["src/ledger.py"]
    context = s.prompt("ok, and the export misses the last day of the month, fix that too")
    assert context.startswith("MEMORY CHECK (your previous turn, not this prompt): it made a fix")  # ... a reminder
    assert "second ROUND_UP" in context
    # Another topic: a fix in another file, run and names blocks again, and takes the guard over.
    assert blocked(s.stop(EXPORT_CAUSE, tools=EXPORT_FIX))
    s.prompt("the export still skips February's last day")
    assert s.stop(EXPORT_CAUSE.replace("month_end", "february_end"), tools=EXPORT_FIX) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_SAME_FIX" and stops()[-1]["fix_guard"]["of"] == 3


def test_the_same_fix_with_evidence_of_another_kind_still_blocks(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))
    s.prompt("still off on refunds")
    decision = "We decided to keep amounts in integer cents rather than floats, because rounding drifted."
    assert blocked(s.stop(f"{AGAIN_CAUSE} {decision}", tools=LEDGER_FIX))  # the decision blocks on its own
    last = stops()[-1]
    assert last["reason"] == "BLOCKED_WRITEBACK" and last["fix_guard"]["of"] == 1


def test_a_stored_fix_guards_its_loop(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    store = ("Bash", {"command": 'gate remember "Ledger rounds half-even in ledger_total()" --kind fix'}, "m-0001")
    assert s.stop(LEDGER_CAUSE, tools=[*LEDGER_FIX, store]) == ""
    assert stops()[-1]["reason"] == "ALLOW_ALREADY_STORED" and stops()[-1]["fix_guarded"] == 1
    s.prompt("refunds are still off by a cent")
    assert s.stop(AGAIN_CAUSE, tools=LEDGER_FIX) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_SAME_FIX"


def test_a_reminded_fix_once_stored_guards_its_loop(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    edit = ("Edit", {"file_path": "src/ledger.py", "old_string": "a", "new_string": "b"}, "ok")
    assert s.stop("The cause was ROUND_UP in ledger_total().", tools=[edit]) == ""  # nothing confirms it
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_UNCONFIRMED_FIX"
    assert "MEMORY CHECK" in s.prompt("works now, thanks")
    store = ("Bash", {"command": 'gate remember "Ledger rounds half-even" --kind finding'}, "m-0002")
    assert s.stop("Stored.", tools=[store]) == ""  # the fix the reminder named, stored (whatever its kind)
    assert stops()[-1]["fix_guarded"] == 2
    s.prompt("refunds are still off by a cent")
    assert s.stop(AGAIN_CAUSE, tools=LEDGER_FIX) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_SAME_FIX" and stops()[-1]["fix_guard"]["of"] == 2


@pytest.mark.parametrize("lapsed", [False, True], ids=["within", "lapsed"])
def test_the_guard_lapses_once_the_loop_has_gone_quiet(
    project: Path, hook: Hook, tmp_path: Path, lapsed: bool
) -> None:
    idle = load_rules("writeback")["fix_guard"]["idle_turns"]
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))
    for i in range(idle if lapsed else idle - 1):  # turns about other things
        s.prompt(f"what does the report module {i} do?")
        s.stop("It renders the monthly report.", tools=[("Read", {"file_path": f"src/report{i}.py"}, "def r(): ...")])
    s.prompt("refunds are off by a cent now, fix it")
    out = s.stop(AGAIN_CAUSE, tools=LEDGER_FIX)
    if lapsed:  # the loop is over: a new one on the same file blocks once more
        assert blocked(out) and "fix_guard" not in stops()[-1]
    else:
        assert out == "" and stops()[-1]["reason"] == "ALLOW_DEFERRED_SAME_FIX"


GUARD = {"turn": 2, "last": 2, "files": ["src/ledger.py"], "commands": ["pytest tests/test_ledger.py"],
         "terms": ["round_up", "ledger_total", "round_half_even"]}


@pytest.mark.parametrize(
    ("found", "by"),
    [
        ({"files": ["src/ledger.py"], "commands": [], "terms": []}, "files"),
        ({"files": ["src/other.py"], "commands": ["pytest tests/test_ledger.py"], "terms": []}, "commands"),
        ({"files": [], "commands": [], "terms": ["round_up", "ledger_total"]}, "terms"),
        ({"files": [], "commands": [], "terms": ["round_up", "refund_total"]}, None),  # one name is not enough
        ({"files": ["src/other.py"], "commands": ["pytest tests/test_other.py"], "terms": []}, None),
    ],
)
def test_what_counts_as_the_same_fix(found: dict[str, list[str]], by: str | None) -> None:
    rules = load_rules("writeback")
    assert rules["fix_guard"]["min_terms"] == 2
    same = same_fix(Ledger("s", writeback_turns=3, writeback_fix_guard=dict(GUARD)), found, rules)
    assert (same or {}).get("by") == by
    if same is not None:
        assert same["of"] == 2


def test_names_are_identifiers_not_words_or_numbers() -> None:
    text = "The cause was ROUND_UP in total(); export.py now calls getLaneHazards at 3.14 s, in 2026, not before."
    assert names([text]) == ["round_up", "export.py", "getlanehazards"]


@pytest.mark.parametrize("shift", [True, False])
def test_a_prompt_on_another_topic_ends_the_guard(
    project: Path, monkeypatch: pytest.MonkeyPatch, shift: bool
) -> None:
    """The recall gate's verdict on the user's prompt: a topic shift ends the loop the guard was about."""
    from gate.gates.base import HookContext, Outcome
    from gate.gates.events import user_prompt_submit as prompt
    from gate.paths import ProjectPaths

    monkeypatch.setattr(prompt, "recall", lambda ctx, ledger: Outcome(
        "fired" if shift else "skipped", "FIRED_TOPIC_SHIFT" if shift else "SKIP_NO_SHIFT", extra={"shift": shift}))
    ledger = Ledger("s", writeback_turns=3, writeback_fix_guard=dict(GUARD))
    ctx = HookContext(event={"prompt": "now the invoice PDF layout", "transcript_path": ""},
                      event_name="UserPromptSubmit", session_id="s", paths=ProjectPaths.for_cwd(project), settings={})
    prompt.handle(ctx, ledger)
    assert (ledger.writeback_fix_guard is None) is shift


def test_the_shift_a_compaction_forces_does_not_end_the_guard(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a compaction the recall gate treats the next prompt as a shift (its topic record is gone); the user
    did not move on, so the debugging loop's guard stays (long loops are where compactions happen)."""
    from gate.gates.base import HookContext, Outcome
    from gate.gates.events import user_prompt_submit as prompt
    from gate.paths import ProjectPaths

    forced_shift = Outcome("fired", "FIRED_TOPIC_SHIFT", extra={"shift": True})
    monkeypatch.setattr(prompt, "recall", lambda ctx, ledger: forced_shift)
    ledger = Ledger("s", writeback_turns=3, writeback_fix_guard=dict(GUARD))
    ledger.rearm()  # what PreCompact does
    assert ledger.force_shift == "compaction"
    ctx = HookContext(event={"prompt": "still off by a cent on refunds", "transcript_path": ""},
                      event_name="UserPromptSubmit", session_id="s", paths=ProjectPaths.for_cwd(project), settings={})
    prompt.handle(ctx, ledger)
    assert ledger.writeback_fix_guard == GUARD


def test_trace_names_the_fix_a_turn_repeats(
    project: Path, hook: Hook, tmp_path: Path, gate: Any
) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))
    s.prompt("still off by a cent on refunds")
    assert s.stop(AGAIN_CAUSE, tools=LEDGER_FIX) == ""
    code, text, _ = gate("trace", "--last")
    assert code == 0
    assert "the fix of a debugging loop that blocked once already" in text
    assert "the same fix as turn 1 (its files: src/ledger.py)" in text
