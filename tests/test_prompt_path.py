"""Following one prompt from its event handler to the rendered context enters no file of the gates twice over.

The measure, as a reader follows the code:

- The UserPromptSubmit handler (gate/gates/events/user_prompt_submit.py) runs in-process on a prompt that shifts
  the topic and gets memories delivered, from a real store and index in a temporary project; sys.setprofile
  records every call into a function defined under gate/.
- A step is a call from one file into a function of another file. Its call site is the nearest calling frame in
  gate/ (file and line). The same callee called again from the same call site is the same step (a loop calling a
  helper 50 times is one step on the path as a reader follows it): each step counts once, where it first occurs.
- The path is the steps in the order they first occur. The files it follows are the gates' own modules
  (gate/gates/ but base.py); the context and answer types every gate reads (gate/gates/base.py) and the services
  below the gates (gate/memory, gate/session, rules, paths, textproc, render, ...) are read like a library, not
  as stations of the path, so steps into them are left out of it.
- A file is entered once for each run of consecutive steps into it: a step into a file the path has left since
  its last step there enters it again. Every file may be entered at most twice.

A second check: the prompt and the reply it answers are each tokenized once. No two texts of theirs that
gate.textproc.terms is called on (from any file) share their last 40 characters: tokenizing the same text, or
another window of it, twice fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import gate

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript

GATE_DIR = os.path.dirname(os.path.abspath(gate.__file__)) + os.sep
GATES_DIR = os.path.join(GATE_DIR, "gates") + os.sep
MOST_ENTRIES = 2
SAME_TAIL = 40

MEMORIES = [
    ("The reserve account waterfall triggers when the coverage ratio falls below its floor", "gotcha"),
    ("Invoice rounding is banker's rounding per line item, never half up", "decision"),
    ("Deploys go through the staging cluster before production", "directive"),
    ("The nightly ledger export runs at two and locks the payments table", "finding"),
    ("Tests of the coverage ratio need the frozen clock fixture", "gotcha"),
]
EARLIER_PROMPT = "Fix the margins of the login page stylesheet"
REPLY = ("I changed the margins in login.css: the header and the form now line up on narrow screens, "
         "and the button no longer wraps. " * 3)
SHIFT = "When does the reserve account waterfall trigger on the coverage ratio?"


def _in_path(path: str) -> bool:
    return path.startswith(GATES_DIR) and os.path.basename(path) != "base.py"


def _short(path: str) -> str:
    return path[len(GATE_DIR):]


class Recorder:
    """The steps of one run (call site -> callee, first occurrence each) and the texts tokenized."""

    def __init__(self) -> None:
        self.steps: dict[tuple[str, int, str, str], None] = {}
        self.tokenized: list[str] = []
        self._terms_code = sys.modules["gate.textproc"].terms.__code__

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(GATE_DIR):
            return
        if code is self._terms_code and frame.f_locals.get("text"):
            self.tokenized.append(frame.f_locals["text"])
        site = frame.f_back
        while site is not None and not site.f_code.co_filename.startswith(GATE_DIR):
            site = site.f_back
        if site is None or site.f_code.co_filename == code.co_filename:
            return
        self.steps.setdefault((site.f_code.co_filename, site.f_lineno, code.co_filename, code.co_qualname), None)

    def path(self) -> list[tuple[str, int, str, str]]:
        """The path's steps in order: the steps into the gates' own modules."""
        return [step for step in self.steps if _in_path(step[2])]

    def entries(self) -> dict[str, int]:
        """Per file, how many times the path enters it (runs of consecutive steps into it)."""
        counts: dict[str, int] = {}
        last = ""
        for _, _, callee, _ in self.path():
            if callee != last:
                counts[_short(callee)] = counts.get(_short(callee), 0) + 1
            last = callee
        return counts

    def printed(self) -> str:
        return "\n".join(f"  {_short(site)}:{line} -> {_short(callee)} {name}"
                         for site, line, callee, name in self.path())


def _delivering_prompt(project: Path, gate_cli: Any, tmp_path: Path) -> tuple[Any, Recorder]:
    from gate.gates.base import HookContext
    from gate.gates.events import user_prompt_submit
    from gate.gates.recall.topic import TopicRecord
    from gate.paths import ProjectPaths
    from gate.session.ledger import Ledger

    for text, kind in MEMORIES:
        code, _, err = gate_cli("remember", text, "--kind", kind)
        assert code == 0, err
    transcript = Transcript(cwd=str(project))
    transcript.prompt(EARLIER_PROMPT)
    transcript.tool("Edit", {"file_path": str(project / "web" / "login.css"), "old_string": "a", "new_string": "b"},
                    "ok")
    transcript.say(REPLY)
    path = tmp_path / "session.jsonl"
    path.write_text(transcript.text(), encoding="utf-8")
    ledger = Ledger(session="path")
    ledger.force_shift = ""  # a session under way: the earlier prompt is on record
    ledger.prompts = 1
    ledger.topic = TopicRecord(weights={"margin": 1.0, "login": 1.0, "page": 1.0, "stylesheet": 1.0},
                               prompts=1).to_dict()
    event = {"session_id": "path", "transcript_path": str(path), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": SHIFT, "prompt_id": "p2"}
    ctx = HookContext(event=event, event_name="UserPromptSubmit", session_id="path",
                      paths=ProjectPaths.for_cwd(str(project)), settings={})
    import gate.textproc  # noqa: F401  (the recorder knows its terms())

    recorder = Recorder()
    sys.setprofile(recorder)
    try:
        outcome = user_prompt_submit.handle(ctx, ledger)
    finally:
        sys.setprofile(None)
    return outcome, recorder


def test_a_delivering_prompt_enters_no_file_more_than_twice(project: Path, gate: Any, tmp_path: Path) -> None:
    outcome, recorder = _delivering_prompt(project, gate, tmp_path)
    assert (outcome.decision, outcome.reason) == ("fired", "FIRED_TOPIC_SHIFT"), outcome
    assert len(outcome.delivered) >= 1, outcome
    entries = recorder.entries()
    assert "gates/recall/fire.py" in entries and "gates/recall/topic.py" in entries, recorder.printed()
    over = {name: count for name, count in entries.items() if count > MOST_ENTRIES}
    assert not over, f"entered more than {MOST_ENTRIES} times: {over}; the path:\n{recorder.printed()}"


def test_the_prompt_and_its_reply_are_tokenized_once(project: Path, gate: Any, tmp_path: Path) -> None:
    outcome, recorder = _delivering_prompt(project, gate, tmp_path)
    assert outcome.decision == "fired", outcome
    tails = [text.rstrip()[-SAME_TAIL:] for text in recorder.tokenized if len(text.rstrip()) >= SAME_TAIL]
    ours = [tail for tail in tails if tail in SHIFT or tail in REPLY]  # (the cue table reads the memories' text)
    assert any(tail in SHIFT for tail in ours) and any(tail in REPLY for tail in ours), recorder.tokenized
    twice = sorted({tail for tail in ours if ours.count(tail) > 1})
    assert not twice, f"tokenized more than once: {twice}"
