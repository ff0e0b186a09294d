"""The recall gate's promises of issue 32 item 8, each held by a test of its own (in hook processes, with a
transcript where the reply a prompt answers matters): a task notification is not searched, the cap of
max_per_prompt memories a prompt, a memory only the reply names is not delivered."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gate.paths import audit_log_file
from gate.rules import load_rules

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript


def run_hook(event: dict[str, Any]) -> tuple[str, int]:
    """conftest's run_hook (the launcher's command in a fresh process); by path: in the full run the name
    `conftest` is tests/e2e's."""
    from tests.conftest import run_hook as run

    return run(event)


WATERFALL = "Reserve account waterfall pays the senior noteholders before the junior tranche"
REPLY = ("The reserve account waterfall pays the senior noteholders first; the junior tranche waits until the "
         "reserve account is full again.")


def audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def remember(gate, title: str, *args: str) -> str:
    code, out, err = gate("remember", title, "--new", *args)
    assert code == 0, err
    return out.strip()


def prompt(project: Path, text: str, transcript: Path, session: str = "sess-p") -> tuple[str, dict[str, Any]]:
    event = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": text}
    out, code = run_hook(event)
    assert code == 0
    return out, audit()[-1]


def after_reply(project: Path, tmp_path: Path, reply: str = REPLY) -> Path:
    """A transcript whose last turn's reply is `reply`: what a prompt with no content of its own answers."""
    path = tmp_path / "session.jsonl"
    path.write_text(Transcript(cwd=str(project)).prompt("How is the reserve paid out?").say(reply).text())
    return path


def test_a_task_notification_is_not_searched_as_an_answer(project: Path, gate, tmp_path: Path) -> None:
    """The reply before it names a memory, as the reply before a "yes" would: a notification is a program's
    message, not the user's answer, so it is not searched at all (no query in the audit), not merely unlucky."""
    memory = remember(gate, WATERFALL, "--kind", "decision")
    transcript = after_reply(project, tmp_path)
    notification = ("<task-notification>\n<task-id>b1c2</task-id>\n<status>completed</status>\n"
                    '<summary>Agent "Check the waterfall" completed</summary>\n'
                    f"<result>{WATERFALL}</result>\n</task-notification>")
    out, record = prompt(project, notification, transcript)
    assert out == ""
    assert record["reason"] == "SKIP_TRIVIAL_PROMPT" and record["delivered"] == []
    assert "query" not in record and "trace" not in record  # never searched
    # the same transcript answered by a person's "yes" is searched by the reply, and finds the memory
    out, record = prompt(project, "yes", transcript, session="sess-yes")
    assert memory in record["delivered"], record


def test_at_most_max_per_prompt_memories_a_prompt(project: Path, gate, tmp_path: Path) -> None:
    cap = int(load_rules("recall")["fire"]["max_per_prompt"])
    words = ["amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor"]
    for n in range(cap + 3):  # each names the prompt's subject as well as the others do
        remember(gate, f"Reserve account waterfall pays noteholders in step {words[n]}", "--kind", "finding")
    out, record = prompt(project, "How does the reserve account waterfall pay noteholders?",
                         tmp_path / "none.jsonl")
    assert out and record["decision"] == "fired"
    assert len(record["delivered"]) == cap, record


def test_a_memory_only_the_reply_names_is_not_delivered(project: Path, gate, tmp_path: Path) -> None:
    """A prompt with content of its own asks about it: the reply it follows is context, not the question."""
    memory = remember(gate, WATERFALL, "--kind", "decision")
    remember(gate, "Dashboard header uses a CSS grid with three columns", "--kind", "finding")
    transcript = after_reply(project, tmp_path)
    out, record = prompt(project, "Now rename the export button on the settings page to Download", transcript)
    assert memory not in record["delivered"] and memory not in out, record
    out, record = prompt(project, "Why does the waterfall pay the senior noteholders first?", transcript,
                         session="sess-own")
    assert memory in record["delivered"], record  # the prompt's own words reach it
