"""Promises of the write-back gate and its reminder that no test held (issue 32: a mutation audit's escapes) and
the defects of issue 30 — each through the real hook entry point, in fresh processes, as Claude Code drives it.

- the agent's answer to a block or a reminder is read as written ("Not worth keeping." is the block's own words);
- a turn still deferred when its session ends reaches the next session's start, once;
- a mute (project or session) silences a pending reminder;
- a teammate agent's message says nothing for the user; "still broken" withdraws the fix alone;
- a prompt with nothing pending never loads the reminder;
- the fix guard holds over a long loop, and a real new-topic prompt ends it;
- a Stop right after a compaction boundary weighs the prompt before it;
- a reply whose last characters begin inside a code block still ends by asking the user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_fix_guard import AGAIN_CAUSE, LEDGER_CAUSE, LEDGER_FIX, blocked, stops
from test_reminder_hooks import ASKS, EDIT, ROOT_CAUSE, Hook, Session, audit, event

from gate.rules import load_rules

GateRun = Callable[..., tuple[int, str, str]]
REMINDER = "MEMORY CHECK (your previous turn, not this prompt)"
CARRIED = "MEMORY CHECK (a previous session's last turn)"
DECISION = "We decided to keep amounts in integer cents rather than floats, because the rounding drifted."
STORE = ("Bash", {"command": 'gate remember "The report keys on the local date" --kind fix'}, "m-0001")


def deferred_asking(s: Session, prompt: str = "the daily report shows yesterday's numbers until 10am, fix it") -> None:
    """A turn that settles a cause and ends by asking the user: deferred, not blocked."""
    s.prompt(prompt)
    assert s.stop(f"{ROOT_CAUSE} The report test passes now.\n\n{ASKS}", tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_ASKS_USER", stops()[-1]


def session_start(project: Path, hook: Hook, transcript: Path, session: str, source: str = "startup") -> str:
    out, code = hook(event(project, "SessionStart", transcript, session, source=source))
    assert code == 0
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


# --- answers read as written (issue 30; issue 32 item 4) ------------------------------------------------------


def _block_then_answer(project: Path, hook: Hook, tmp_path: Path, answer: str) -> tuple[str, dict[str, Any]]:
    s = Session(project, tmp_path / "t.jsonl", hook, session=f"sess-{tmp_path.name}")
    s.prompt("The ledger totals are off by a cent, fix it")
    out = s.stop(LEDGER_CAUSE, tools=LEDGER_FIX)
    assert blocked(out)
    reason = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    s.t.stop_hook_context(reason)
    s.stop(answer, active=True)
    return reason, stops()[-1]


def test_the_block_s_own_words_answer_it(project: Path, hook: Hook, tmp_path: Path) -> None:
    """The block says "If it is already saved, or not worth keeping, say so in one line": those words, said back
    as the block asks, are an acknowledgement."""
    message, _ = _block_then_answer(project, hook, tmp_path, "Noted.")
    done = message.splitlines()[-1]
    assert "already saved" in done and "not worth keeping" in done, done
    for phrase in ("not worth keeping", "already saved"):
        answer = phrase[0].upper() + phrase[1:] + "."
        folder = tmp_path / phrase.replace(" ", "-")
        folder.mkdir()
        _, stop = _block_then_answer(project, hook, folder, answer)
        assert stop["outcome"] == "acknowledged", (answer, stop)


@pytest.mark.parametrize("answer", [
    "Not worth keeping.",
    "Not worth keeping: the fix is in the diff.",
    "It's already saved.",
    "Saved already (m-0003).",
    "Nothing to store.",
    "Nothing worth keeping here.",
    "Not worth storing.",
    "No memory needed: the diff says it all.",
    "不值得保存。",
    "已經存過了。",
    "没有需要记住的。",
    "Pas la peine de le garder.",
    "Déjà enregistré.",
    "Rien à retenir ici.",
])
def test_plain_variants_of_the_answer_are_acknowledgements(
    project: Path, hook: Hook, tmp_path: Path, answer: str
) -> None:
    _, stop = _block_then_answer(project, hook, tmp_path, answer)
    assert stop["outcome"] == "acknowledged", stop


@pytest.mark.parametrize("answer", ["Moving on to the next task.", "I'll keep the fix in mind while refactoring.",
                                    "Is it worth keeping?"])
def test_an_answer_that_does_not_decide_stays_ignored(project: Path, hook: Hook, tmp_path: Path, answer: str) -> None:
    _, stop = _block_then_answer(project, hook, tmp_path, answer)
    assert stop["outcome"] == "ignored", stop


def test_a_reminder_declined_in_the_block_s_words_is_acknowledged(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    deferred_asking(s)
    assert "not worth keeping" in s.prompt("yes please")
    s.stop("Not worth keeping. Adding the regression test now.")
    assert stops()[-1]["reminder_outcome"] == "acknowledged", stops()[-1]


# --- nothing lost at the end (issue 30) ------------------------------------------------------------------------


def test_a_turn_deferred_at_a_session_s_end_reaches_the_next_session_once(
    project: Path, hook: Hook, tmp_path: Path, gate: GateRun
) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)  # ... and the session ends there: no next prompt carries the reminder
    b = Session(project, tmp_path / "b.jsonl", hook, session="sess-b")
    context = session_start(project, hook, b.path, "sess-b")
    assert CARRIED in context, context
    assert ROOT_CAUSE[:60] in context  # its quotes: actionable without the old context
    assert ' remember "<one-line fact>" --kind fix' in context
    start = audit()[-1]
    assert start["carried_reminder"] == {"session": "sess-a", "turn": 1}, start
    assert CARRIED not in b.prompt("now the weekly report, please")  # once: not again at the prompt
    b.stop("Stored it.", tools=[STORE])
    assert stops()[-1]["reminder_outcome"] == "stored", stops()[-1]
    c = Session(project, tmp_path / "c.jsonl", hook, session="sess-c")
    assert CARRIED not in session_start(project, hook, c.path, "sess-c")  # gone once it reached a session
    code, text, _ = gate("stats")
    assert code == 0 and "deferred 1 → reminded at the next prompt 0 (+1 at the next session's start)" in text, text
    assert "stored 1 · acknowledged 0 · ignored 0" in text, text


def test_a_turn_whose_reminder_came_in_its_own_session_is_not_carried(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    assert REMINDER in a.prompt("yes please")
    a.stop("Not worth keeping.")
    assert CARRIED not in session_start(project, hook, tmp_path / "b.jsonl", "sess-b")


def test_a_resumed_session_gets_its_reminder_at_its_next_prompt_not_twice(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    assert CARRIED not in session_start(project, hook, a.path, "sess-a", source="resume")  # its own: the prompt's
    assert REMINDER in a.prompt("yes please")
    assert CARRIED not in session_start(project, hook, tmp_path / "b.jsonl", "sess-b")


def test_a_resumed_session_is_shown_the_other_sessions_turns_and_its_own_at_its_prompt(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    """A resumed session with another session's turn waiting: the start carries that one under the carried header,
    never its own (which its next prompt brings up as its own reminder)."""
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    deferred_asking(Session(project, tmp_path / "b.jsonl", hook, session="sess-b"))
    context = session_start(project, hook, a.path, "sess-a", source="resume")
    assert context.count(CARRIED) == 1, context
    assert [pair[0] for pair in audit()[-1]["carried_turns"]] == ["sess-b"], audit()[-1]
    assert REMINDER in a.prompt("yes please"), "its own turn, at its own prompt"


def test_a_compaction_start_carries_no_other_session_s_turn(project: Path, hook: Hook, tmp_path: Path) -> None:
    """A compaction is no new session: another session's deferred turn waits for the next session's start."""
    b = Session(project, tmp_path / "b.jsonl", hook, session="sess-b")
    assert CARRIED not in session_start(project, hook, b.path, "sess-b")
    deferred_asking(Session(project, tmp_path / "a.jsonl", hook, session="sess-a"))  # ... and it ends there
    context = session_start(project, hook, b.path, "sess-b", source="compact")
    assert CARRIED not in context and "carried_reminder" not in audit()[-1], context
    assert CARRIED in session_start(project, hook, tmp_path / "c.jsonl", "sess-c"), "still kept for a new session"


def test_a_reminder_taken_by_another_session_is_not_shown_twice(project: Path, hook: Hook, tmp_path: Path) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    assert CARRIED in session_start(project, hook, tmp_path / "b.jsonl", "sess-b")
    assert "MEMORY CHECK" not in a.prompt("yes please")  # the first session comes back: it was delivered already


def test_a_deferred_turn_older_than_a_week_is_dropped(project: Path, hook: Hook, tmp_path: Path) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    week = load_rules("writeback")["reminder"]["carry_days"]
    assert week == 7
    [carry] = list((Path(os.environ["GATE_HOME"]) / "state" / "carry").glob("*.json"))
    data = json.loads(carry.read_text())
    for entry in data["deferred"].values():
        entry["time"] = time.time() - 7.5 * 86400
    carry.write_text(json.dumps(data))
    assert "MEMORY CHECK" not in session_start(project, hook, tmp_path / "b.jsonl", "sess-b")
    assert json.loads(carry.read_text())["deferred"] == {}  # and it is gone from the file


def test_a_deferred_turn_with_no_words_quoted_is_not_carried(project: Path, hook: Hook, tmp_path: Path) -> None:
    """A turn deferred on its tool evidence alone (edits, no sentence quoted) gives a new session nothing to act on:
    taken from the file, not shown. (Its own session's next prompt still reminds of it.)"""
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    [carry] = list((Path(os.environ["GATE_HOME"]) / "state" / "carry").glob("*.json"))
    data = json.loads(carry.read_text())
    for entry in data["deferred"].values():
        entry["quotes"] = [""]
    carry.write_text(json.dumps(data))
    assert "MEMORY CHECK" not in session_start(project, hook, tmp_path / "b.jsonl", "sess-b")
    assert json.loads(carry.read_text())["deferred"] == {}


def test_a_fix_a_teammate_asked_for_is_carried_its_decision_is_not(project: Path, hook: Hook, tmp_path: Path) -> None:
    """A teammate's turn is deferred (the agent reading its answer is at a teammate's prompt too, so nobody would be
    asked again): its fix reaches the project's next session (rules/writeback.toml [reminder] carry_teammate_kinds),
    a decision it made does not."""
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    a.prompt('<teammate-message teammate_id="lead">the daily report is a day behind, fix it</teammate-message>')
    assert a.stop(f"{ROOT_CAUSE} The report test passes now.", tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_AGENT_PROMPT", stops()[-1]
    context = session_start(project, hook, tmp_path / "b.jsonl", "sess-b")
    assert CARRIED in context and ROOT_CAUSE[:60] in context, context
    c = Session(project, tmp_path / "c.jsonl", hook, session="sess-c")
    c.prompt('<teammate-message teammate_id="lead">where should amounts live?</teammate-message>')
    assert c.stop(DECISION, tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_AGENT_PROMPT", stops()[-1]
    assert "MEMORY CHECK" not in session_start(project, hook, tmp_path / "d.jsonl", "sess-d")


def test_more_than_three_carried_turns_wait_for_the_next_start(project: Path, hook: Hook, tmp_path: Path) -> None:
    """A start shows the newest three deferred turns; a fourth is not lost: the next start shows it."""
    for name in "abcd":
        deferred_asking(Session(project, tmp_path / f"{name}.jsonl", hook, session=f"sess-{name}"))
    context = session_start(project, hook, tmp_path / "e.jsonl", "sess-e")
    assert context.count(CARRIED) == 3, context
    assert [pair[0] for pair in audit()[-1]["carried_turns"]] == ["sess-b", "sess-c", "sess-d"], audit()[-1]
    assert session_start(project, hook, tmp_path / "f.jsonl", "sess-f").count(CARRIED) == 1
    assert audit()[-1]["carried_reminder"]["session"] == "sess-a"
    assert "MEMORY CHECK" not in session_start(project, hook, tmp_path / "g.jsonl", "sess-g")


def test_a_muted_project_keeps_the_carried_turn_for_later(
    project: Path, hook: Hook, tmp_path: Path, gate: GateRun
) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    assert gate("mute")[0] == 0
    assert session_start(project, hook, tmp_path / "b.jsonl", "sess-b") == ""
    assert gate("unmute")[0] == 0
    assert CARRIED in session_start(project, hook, tmp_path / "c.jsonl", "sess-c")


# --- mutes silence a pending reminder (issue 32 items 7 and 8) -------------------------------------------------


def test_a_project_mute_silences_a_pending_reminder(project: Path, hook: Hook, tmp_path: Path, gate: GateRun) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    deferred_asking(s)
    assert gate("mute")[0] == 0
    assert "MEMORY CHECK" not in s.prompt("yes please")
    assert not any(r.get("reason") == "REMINDED_WRITEBACK" for r in audit())


def test_a_session_mute_after_a_deferral_silences_its_reminder(
    project: Path, hook: Hook, tmp_path: Path, gate: GateRun
) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    deferred_asking(s)
    assert gate("mute", "--session", "sess-r")[0] == 0
    assert "MEMORY CHECK" not in s.prompt("yes please")
    assert not any(r.get("reason") == "REMINDED_WRITEBACK" for r in audit())


# --- who answers the reminder, and what a refutation withdraws (issue 32 item 8) ------------------------------


def test_a_teammate_agent_s_message_neither_confirms_nor_refutes(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("there is no sound when the frog jumps, fix it")
    assert s.stop(ROOT_CAUSE, tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_UNCONFIRMED_FIX"
    context = s.prompt('<teammate-message teammate_id="qa">works now, thanks!</teammate-message>')
    assert REMINDER in context and "reads as a confirmation" not in context
    assert "reminder_answer" not in audit()[-1]
    s.stop("Noted.")
    assert s.stop(ROOT_CAUSE, tools=[EDIT]) == ""
    context = s.prompt('<teammate-message teammate_id="qa">still broken on my side</teammate-message>')
    assert REMINDER in context  # not withdrawn: no user said it failed
    assert "reminder_withdrawn" not in audit()[-1]


def test_still_broken_withdraws_the_fix_and_keeps_the_decision(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("the daily report shows yesterday's numbers until 10am, fix it")
    assert s.stop(f"{ROOT_CAUSE} {DECISION}\n\n{ASKS}", tools=[EDIT]) == ""
    deferred = stops()[-1]
    assert deferred["reason"] == "ALLOW_DEFERRED_ASKS_USER" and {"fix", "decision"} <= set(deferred["evidence"])
    context = s.prompt("still broken, the numbers are a day old")
    assert "made a decision" in context and "made a fix" not in context, context
    assert DECISION[:50] in context and ROOT_CAUSE[:50] not in context
    assert audit()[-1]["reminder_evidence"] == ["decision"]


# --- the reminder's cost and channel (issue 32 item 8) --------------------------------------------------------


HOOK_IN_PROCESS = """
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()), encoding="utf-8")
buffer = io.BytesIO()
sys.stdout, real = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True), sys.stdout
from gate.hook import main
code = main()
sys.stdout = real
loaded = sorted(m for m in sys.modules if m.startswith("gate."))
print(json.dumps({"code": code, "loaded": loaded}))
"""


def test_a_prompt_with_nothing_pending_never_loads_the_reminder(project: Path, tmp_path: Path) -> None:
    payload = event(project, "UserPromptSubmit", tmp_path / "t.jsonl", prompt="what does the export do?")
    (tmp_path / "t.jsonl").write_text("")
    proc = subprocess.run([sys.executable, "-c", HOOK_IN_PROCESS, json.dumps(payload)], capture_output=True,
                          text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.splitlines()[-1])["loaded"]
    assert any(name.split(".")[-1] == "recall" for name in loaded), loaded  # the prompt's gate ran
    assert not [name for name in loaded if "reminder" in name.split(".")[-1]], loaded


def test_a_reminder_never_blocks_the_prompt(project: Path, hook: Hook, tmp_path: Path) -> None:
    """The hook's own output, not the audit record: additional context only, never a decision."""
    s = Session(project, tmp_path / "t.jsonl", hook)
    deferred_asking(s)
    s._write()
    out, code = hook(event(project, "UserPromptSubmit", s.path, "sess-r", prompt="yes please"))
    assert code == 0 and out
    answer = json.loads(out)
    assert set(answer) == {"hookSpecificOutput"}, answer
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert REMINDER in answer["hookSpecificOutput"]["additionalContext"]


# --- the fix guard (issue 32 item 8) ----------------------------------------------------------------------------


def test_the_guard_holds_over_a_loop_longer_than_its_idle_turns(project: Path, hook: Hook, tmp_path: Path) -> None:
    idle = load_rules("writeback")["fix_guard"]["idle_turns"]
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))
    for i in range(idle + 2):  # the same fix, again and again: one loop, never a second block
        s.prompt(f"still off by a cent on refunds ({i})")
        assert not blocked(s.stop(AGAIN_CAUSE, tools=LEDGER_FIX)), i
        assert stops()[-1]["fix_guard"]["of"] == 1, (i, stops()[-1])


def test_a_real_prompt_on_another_topic_ends_the_guard(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("The ledger totals are off by a cent, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))
    s.prompt("still off by a cent on refunds")
    assert not blocked(s.stop(AGAIN_CAUSE, tools=LEDGER_FIX))
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_SAME_FIX"
    s.prompt("Write the onboarding guide for the marketing website's newsletter signup, with screenshots")
    assert audit()[-1]["shift"] is True, audit()[-1]  # the recall gate's own verdict: a new topic
    s.stop("I drafted docs/onboarding.md with the signup steps.",
           tools=[("Write", {"file_path": "docs/onboarding.md", "content": "# Onboarding"}, "File created")])
    s.prompt("The ledger totals are off by a cent again, fix it")
    assert blocked(s.stop(LEDGER_CAUSE, tools=LEDGER_FIX))  # a new loop: it blocks once more
    assert "fix_guard" not in stops()[-1]


# --- a Stop after a compaction boundary (issue 32 item 8) -----------------------------------------------------


def test_a_stop_after_a_compaction_boundary_weighs_the_prompt_before_it(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    """The teammate's request is summarised away by the compaction; the Stop still knows whose it was."""
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt('<teammate-message teammate_id="lead">the daily report is a day behind, fix it</teammate-message>')
    s.t.tool("Read", {"file_path": "dashboard/cache.py"}, "def key(): ...")
    s._write()
    out, code = hook(event(project, "PreCompact", s.path, "sess-r", trigger="auto"))
    assert code == 0 and out == ""
    s.t.lines.append({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                      "sessionId": "sess-r", "timestamp": "2025-11-03T10:30:00.000Z"})
    session_start(project, hook, s.path, "sess-r", source="compact")
    assert s.stop(f"{ROOT_CAUSE} The report test passes now.", tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_AGENT_PROMPT", stops()[-1]


# --- the end of a reply that begins inside a code block (issue 30) --------------------------------------------


def test_a_closing_question_after_a_long_code_block_still_asks_the_user(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    code = "\n".join(f"    report_row_{i} = build_row(day={i}, zone=local_zone())" for i in range(40))
    reply = f"{ROOT_CAUSE} The report test passes now.\n\n```python\n{code}\n```\n\n{ASKS}"
    assert len(reply) > 1500 and reply.rfind("```python") < len(reply) - 1200  # the tail starts inside the code
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("the daily report shows yesterday's numbers until 10am, please fix it")
    assert s.stop(reply, tools=[EDIT]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_ASKS_USER", stops()[-1]


# --- a bare pick after several edits (issue 30) -----------------------------------------------------------------


def test_a_bare_pick_after_five_edits_defers_instead_of_blocking(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("the settings page needs a dark mode")
    s.stop("Two ways: 1. a CSS variable theme, 2. a second stylesheet. Which do you prefer?")
    s.prompt("1")
    edits = [("Edit", {"file_path": f"web/theme{i}.css", "old_string": "a", "new_string": "b"}, "updated")
             for i in range(5)]
    assert s.stop("Done: the theme now reads its colours from CSS variables.", tools=edits) == ""
    last = stops()[-1]
    assert last["signals"].get("bare_choice") == 1.0 and last["signals"].get("edits") == 5.0, last
    assert last["reason"] == "ALLOW_DEFERRED", last


def test_a_session_start_with_nothing_carried_never_loads_the_reminder(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    a = Session(project, tmp_path / "a.jsonl", hook, session="sess-a")
    deferred_asking(a)
    assert REMINDER in a.prompt("yes please")  # taken up in its own session: nothing waits for another one
    payload = event(project, "SessionStart", tmp_path / "b.jsonl", "sess-b", source="startup")
    (tmp_path / "b.jsonl").write_text("")
    proc = subprocess.run([sys.executable, "-c", HOOK_IN_PROCESS, json.dumps(payload)], capture_output=True,
                          text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.splitlines()[-1])["loaded"]
    assert "gate.session.carryover" in loaded  # it asked ...
    assert not [name for name in loaded if "reminder" in name.split(".")[-1]], loaded  # ... and loaded no more
