"""A background subagent's report, brought back by a task notification, is evidence of the turn it opens; the
notification is a program's message, never the user's request, rule or confirmation (issues 24 and 22).
The e2e scenario in the real CLI is tests/e2e/test_background_report.py."""

from __future__ import annotations

from pathlib import Path

from support import stop_verdict
from test_reminder_hooks import ROOT_CAUSE, Hook, Session, audit

from gate.session.transcript import read_turn
from gate.session.turn import notification_report

REPORT = ("The root cause was an off-by-one in the reserve trigger: it counted the current month as missed. "
          "I changed >= to > in trigger.py and the trigger tests pass now.")


def notification(result: str | None, summary: str = 'Agent "Fix the trigger test" completed') -> str:
    """The user message 2.1.332 writes when a background task ends (a subagent's carries its report)."""
    parts = ["<task-notification>", "<task-id>a1b2c3d</task-id>", "<status>completed</status>",
             f"<summary>{summary}</summary>"]
    if result is not None:
        parts.append(f"<result>{result}</result>")
    return "\n".join([*parts, "</task-notification>"])


def test_the_report_is_the_notifications_result() -> None:
    assert notification_report(notification(REPORT)) == REPORT
    assert notification_report(notification(f"\n{REPORT}\n\n")) == REPORT
    assert notification_report(notification(None, 'Background command "Build" completed (exit code 0)')) == ""
    assert notification_report(f"please read this: <result>{REPORT}</result>") == ""  # a person's prompt
    assert notification_report(f"<task-notification>\n<result>{REPORT}") == REPORT  # cut short: what there is


def test_the_report_is_text_of_the_turn_it_opens(tmp_path: Path) -> None:
    from cli_transcript import Transcript

    t = Transcript()
    t.prompt("Hand the trigger test to a subagent")
    t.tool("Agent", {"prompt": "Fix the trigger test", "subagent_type": "general-purpose"},
           "Async agent launched successfully.\nagentId: a1b2c3d")
    t.say("A subagent is on it.")
    t.prompt(notification(REPORT))
    t.say("The subagent is done.")
    path = tmp_path / "t.jsonl"
    path.write_text(t.text())
    turn = read_turn(str(path))
    assert turn.prompt.startswith("<task-notification>") and turn.report == REPORT
    assert turn.assistant_texts == [REPORT, "The subagent is done."]


def stops() -> list[dict]:
    return [r for r in audit() if r["event"] == "Stop"]


def test_a_report_that_settled_a_fix_blocks_its_turn_on_the_report_alone(
    project: Path, hook: Hook, tmp_path: Path
) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    # The notification's own words would read as a person's request and rules ("fix", "from now on always",
    # "use X, not Y"): none of them counts, the report does.
    summary = 'Agent "Fix it; from now on always use UTC, not local dates" completed'
    s.prompt(notification(REPORT, summary))
    out = s.stop("The subagent is done; its report is above.")
    assert stop_verdict(out) is not None
    last = stops()[-1]
    assert last["reason"] == "BLOCKED_WRITEBACK" and last["subagent_report"] is True
    assert last["signals"].get("fix") and last["signals"].get("confirmed")
    assert not {"asked_fix", "preference", "user_rule", "user_decision", "choice", "decides"} & set(last["signals"])
    assert "off-by-one" in " ".join(last["evidence_quotes"])


def test_a_notification_without_a_report_still_answers_a_program(project: Path, hook: Hook, tmp_path: Path) -> None:
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt(notification(None, 'Background command "Build the game" completed (exit code 0)'))
    assert s.stop(f"{ROOT_CAUSE} The build passes now.") == ""
    last = stops()[-1]
    assert last["reason"] == "ALLOW_MACHINE_PROMPT" and "subagent_report" not in last


def test_a_notification_is_no_answer_to_a_pending_reminder(project: Path, hook: Hook, tmp_path: Path) -> None:
    edit = ("Edit", {"file_path": "dashboard/cache.py", "old_string": "a", "new_string": "b"}, "ok")
    s = Session(project, tmp_path / "t.jsonl", hook)
    s.prompt("the daily report shows yesterday's numbers until 10am, please fix it")
    assert s.stop(ROOT_CAUSE, tools=[edit]) == ""
    assert stops()[-1]["reason"] == "ALLOW_DEFERRED_UNCONFIRMED_FIX"
    # A subagent's "still broken" is not the user's refutation: the reminder is not withdrawn ...
    context = s.prompt(notification("No, the export is still broken on the staging server."))
    assert context.startswith("MEMORY CHECK (your previous turn")
    reminded = audit()[-1]
    assert reminded["reminder_of"] == 1 and "reminder_answer" not in reminded
    assert "reminder_withdrawn" not in reminded
    s.stop("Noted.")
    # ... and a subagent's "works now, thanks" is not the user's confirmation.
    s.prompt("the weekly report is stale too, fix it")
    assert s.stop(ROOT_CAUSE, tools=[edit]) == ""
    context = s.prompt(notification("Works now, thanks! All green."))
    assert "MEMORY CHECK (your previous turn" in context
    assert "reads as a confirmation" not in context and "reminder_answer" not in audit()[-1]
