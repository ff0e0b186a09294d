"""The write-back reminder (issue 22): a turn the Stop does not block but defers, and the next prompt's MEMORY
CHECK — through the real hook entry point, in fresh processes, as Claude Code drives it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript

from gate.gates.base import HookContext, Outcome
from gate.gates.writeback.message import render
from gate.paths import ProjectPaths, audit_log_file
from gate.rules import load_rules

Hook = Callable[..., tuple[str, int]]

ROOT_CAUSE = "The root cause was a stale cache key: the report keyed on the UTC date, not the local one."
ASKS = "Shall I also add a regression test for the day boundary?"


def event(project: Path, name: str, transcript: Path, session: str = "sess-r", **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(transcript), "cwd": str(project),
            "hook_event_name": name, **fields}


def audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Session:
    """A transcript written as the session goes, and the hooks run at the moments Claude Code runs them."""

    def __init__(self, project: Path, path: Path, hook: Hook, session: str = "sess-r") -> None:
        self.project, self.path, self.hook, self.session = project, path, hook, session
        self.t = Transcript(cwd=str(project))
        self.prompt_outputs: list[str] = []  # each UserPromptSubmit's raw output, as Claude Code reads it

    def _write(self) -> None:
        self.path.write_text(self.t.text())

    def prompt(self, text: str) -> str:
        """UserPromptSubmit runs before the prompt is written; what it adds to the context is returned."""
        self._write()
        out, code = self.hook(event(self.project, "UserPromptSubmit", self.path, self.session, prompt=text))
        assert code == 0
        self.prompt_outputs.append(out)
        self.t.prompt(text)
        if not out:
            return ""
        return json.loads(out)["hookSpecificOutput"]["additionalContext"]

    def stop(self, *texts: str, tools: list[tuple[str, dict[str, Any], str]] = (), active: bool = False) -> str:
        for name, tool_input, result in tools:
            self.t.tool(name, tool_input, result)
        for text in texts:
            self.t.say(text)
        self._write()
        out, code = self.hook(event(self.project, "Stop", self.path, self.session, stop_hook_active=active,
                                    last_assistant_message=texts[-1] if texts else ""))
        assert code == 0
        return out


EDIT = ("Edit", {"file_path": "dashboard/cache.py", "old_string": "a", "new_string": "b"},
        "The file dashboard/cache.py has been updated.")


def test_a_turn_that_settles_a_cause_and_asks_the_user_is_reminded_at_the_next_prompt(
    project: Path, hook: Hook, tmp_path: Path, gate: Callable[..., tuple[int, str, str]]
) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("the daily report shows yesterday's numbers until 10am, please fix it")
    assert s.stop(f"{ROOT_CAUSE} The report test passes now.\n\n{ASKS}", tools=[EDIT]) == ""  # not blocked
    [stop] = [r for r in audit() if r["event"] == "Stop"]
    assert stop["reason"] == "ALLOW_DEFERRED_ASKS_USER" and stop["deferred"] == 1
    context = s.prompt("yes please")
    assert context.startswith("MEMORY CHECK (your previous turn, not this prompt): it made a fix and stored nothing.")
    assert ROOT_CAUSE[:60] in context  # what it saw
    assert " remember \"<one-line fact>\" --kind fix" in context  # the exact command
    assert "not worth keeping, go on" in context
    reminded = audit()[-1]
    assert (reminded["event"], reminded["reason"], reminded["gate"]) == ("UserPromptSubmit", "REMINDED_WRITEBACK",
                                                                         "writeback")
    assert reminded["reminder_of"] == 1 and reminded["reminders"] == 1 and reminded["recall_reason"]
    # The agent stores; the Stop after the reminded prompt records it, and nothing comes back.
    s.stop("Stored it.", tools=[("Bash", {"command": 'gate remember "Report keys on the local date" --kind fix'},
                                 "m-0001")])
    last = audit()[-1]
    assert last["reason"] == "ALLOW_ALREADY_STORED" and last["reminder_outcome"] == "stored"
    assert last["reminder_outcome_of"] == 1
    assert "MEMORY CHECK" not in s.prompt("thanks, now the weekly report")
    code, text, _ = gate("stats")  # counted apart from the blocks
    assert code == 0
    assert "deferred 1 → reminded at the next prompt 1" in text and "stored 1 · acknowledged 0 · ignored 0" in text


def test_a_refuted_fix_is_withdrawn_and_a_confirmed_one_says_so(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("there is no sound when the frog jumps, fix it")
    assert s.stop(f"{ROOT_CAUSE}", tools=[EDIT]) == ""  # a cause stated, nothing confirms it: deferred
    assert audit()[-1]["reason"] == "ALLOW_DEFERRED_UNCONFIRMED_FIX"
    assert "MEMORY CHECK" not in s.prompt("still no sound")  # the user's answer refutes it
    assert audit()[-1]["reminder_withdrawn"] == 1  # the turn it named
    assert s.stop(f"{ROOT_CAUSE}", tools=[EDIT]) == ""
    context = s.prompt("works now, thanks!")
    assert "MEMORY CHECK (your previous turn" in context
    assert "The user's reply reads as a confirmation that it worked." in context
    assert audit()[-1]["reminder_answer"] == "confirms"


def test_reminders_are_capped_per_session_and_never_block(project: Path, hook: Hook, tmp_path: Path) -> None:
    cap = load_rules("writeback")["reminder"]["cap"]
    s = Session(project, tmp_path / "t.jsonl", hook)
    shown = 0
    for i in range(cap + 3):
        s.prompt(f"the report {i} shows stale numbers, fix it")
        assert s.stop(f"{ROOT_CAUSE} (report {i})", tools=[EDIT]) == ""
        context = s.prompt(f"ok, next one {i}")
        shown += "MEMORY CHECK" in context
        s.stop("Noted.")
    assert shown == cap
    records = audit()
    assert sum(1 for r in records if r.get("reason") == "REMINDED_WRITEBACK") == cap
    assert not any(r.get("decision") == "blocked" for r in records if r["event"] == "UserPromptSubmit")
    # ... and what Claude Code reads: the hook's own output is additional context, never a decision to block
    answers = [json.loads(out) for out in s.prompt_outputs if out]
    assert len(answers) >= cap and all(set(a) == {"hookSpecificOutput"} for a in answers), answers
    assert sum(1 for r in records if r.get("reason") == "ALLOW_REMINDERS_CAPPED") >= 2


def test_a_prompt_with_no_reminder_pending_pays_one_ledger_read(tmp_path: Path) -> None:
    """The composite UserPromptSubmit handler imports the reminder only when one is pending."""
    code = (
        "import sys; import gate.gates.events.user_prompt_submit; "
        "print('gate.gates.writeback.reminder' in sys.modules, 'gate.gates.writeback.gate' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_block_message_is_grammatical_in_full(project: Path) -> None:
    ctx = HookContext(event={}, event_name="Stop", session_id="s", paths=ProjectPaths.for_cwd(project), settings={})
    rules = load_rules("writeback")
    from gate.rule_reading import action_phrase

    text = render(ctx, action_phrase(["fix"], rules), ["fix"], [ROOT_CAUSE])
    lines = text.splitlines()
    assert lines[0] == "MEMORY CHECK: this turn made a fix and stored nothing."
    assert lines[1:3] == ["What I saw:", f'  - "{ROOT_CAUSE}"']
    assert lines[3].startswith("If it will matter in a later session, store it now")
    # the placeholders sit in double quotes, where the shell runs `…` and $(…): the agent is told before it writes
    assert "no backticks or $ inside the double quotes" in lines[3]
    assert lines[4].endswith(
        ' remember "<one-line fact>" --kind fix --body "<why, where, how to verify>" '
        '--cues "<how it would be asked>" --link fixes:<ID>'
    )
    assert lines[-1] == "If it is already saved, or not worth keeping, say so in one line and stop."
    both = render(ctx, action_phrase(["decision", "gotcha"], rules), ["decision", "gotcha"], [])
    assert both.splitlines()[0] == "MEMORY CHECK: this turn made a decision and hit a gotcha and stored nothing."


@pytest.mark.parametrize(
    ("kinds", "phrase"),
    [
        (["fix"], "made a fix"),
        (["decision", "fix"], "made a decision and a fix"),
        (["preference"], "heard a lasting preference"),
        (["decision", "fix", "gotcha", "preference", "learning"],
         "made a decision, a fix and a finding, hit a gotcha, and heard a lasting preference"),
    ],
)
def test_the_kinds_read_as_what_the_turn_did(kinds: list[str], phrase: str) -> None:
    from gate.rule_reading import action_phrase

    assert action_phrase(kinds, load_rules("writeback")) == phrase


def test_a_broken_reminder_costs_neither_the_recall_answer_nor_a_loop(project: Path) -> None:
    from gate.gates.events import user_prompt_submit as prompt
    from gate.session.ledger import Ledger

    ledger = Ledger("s")
    ledger.writeback_reminder = {"turn": 1, "kinds": ["fix"], "quotes": 7}  # damaged: quotes is not a list
    ctx = HookContext(event={"prompt": "hello there, what next?", "transcript_path": ""}, event_name="UserPromptSubmit",
                      session_id="s", paths=ProjectPaths.for_cwd(project), settings={"recall": False})
    outcome = prompt.handle(ctx, ledger)
    assert isinstance(outcome, Outcome) and outcome.reason == "SKIP_MUTED"
    assert outcome.extra.get("reminder_error") and ledger.writeback_reminder is None


def test_stats_count_reminders_apart_from_blocks() -> None:
    from gate.stats.writeback import adoption_figures, writeback_figures

    def stop(reason: str, **extra: Any) -> dict[str, Any]:
        return {"event": "Stop", "gate": "writeback", "session": "s", "reason": reason, **extra}

    def prompt(reason: str, **extra: Any) -> dict[str, Any]:
        return {"event": "UserPromptSubmit", "gate": "recall", "session": "s", "reason": reason, **extra}

    records = [
        stop("BLOCKED_WRITEBACK", evidence=["fix"]),
        stop("ALLOW_STOP_ACTIVE", outcome="stored", outcome_of="previous_block"),
        stop("ALLOW_DEFERRED_ASKS_USER", deferred=1),
        prompt("REMINDED_WRITEBACK", reminder="REMINDED_WRITEBACK", reminder_of=1),
        stop("ALLOW_ALREADY_STORED", store_decision="stored", reminder_outcome="stored", reminder_outcome_of=1),
        stop("ALLOW_DEFERRED_UNCONFIRMED_FIX", deferred=3),
        prompt("SKIP_NO_SHIFT", reminder_withdrawn=3),
        stop("ALLOW_DEFERRED", deferred=4),
        prompt("FIRED_TOPIC_SHIFT", reminder="REMINDED_WRITEBACK", reminder_of=4),
        stop("ALLOW_NO_SIGNAL", reminder_outcome="ignored", reminder_outcome_of=4),
    ]
    figures = writeback_figures(records, cap=5)
    assert figures["blocks"] == 1 and figures["outcomes"]["stored"] == 1
    assert figures["voluntary"] == {"stored": 0, "acknowledged": 0}  # the reminded store is the reminder's
    assert figures["reminders"] == {
        "deferred_turns": 3, "reminded": 2, "withdrawn": 1, "carried": 0,
        "outcomes": {"stored": 1, "acknowledged": 0, "ignored": 1, "pending": 0},
        "per_100_turns": round(100 * 2 / 6, 1),
    }
    adoption = adoption_figures(figures, sessions=1)
    # consequential: the block and the three deferred turns (the store that answered a reminder is its outcome)
    assert (adoption["consequential_turns"], adoption["gated"], adoption["stored"]) == (4, 2, 2)
