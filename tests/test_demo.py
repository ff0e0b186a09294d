"""`gate demo`: the shipped sample session, through the real hook process, in a throwaway home.

The assertions are on behaviour (what was delivered, that a turn was held, that the stored memory exists), not
on the wording of the gates' messages, which their own tests own: the demo must keep showing a recall, a change
refused until the agent's own search, a gotcha and a block while the gates' tuning changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gate.demo.play import SAMPLE
from gate.replay.timeline import read_timeline

DECISION, GOTCHA, DIRECTIVE = "m-5e7c1a", "m-9a0d3e", "m-d17ec7"


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).parent / "gate"), "demo", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def _steps(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["errors"] == []
    return report["steps"]


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


def test_the_demo_shows_a_recall_a_gotcha_and_a_block_and_its_outcome(isolated_home: Path) -> None:
    home = Path(os.environ["HOME"])
    before = (_tree(isolated_home), _tree(home))
    # The user's own settings must not change what the demo shows: here the write-back gate is off for them.
    steps = _steps(_demo("--json", env={"GATE_WRITEBACK": "off", "GATE_RECALL": "off"}))
    events = [s["event"] for s in steps]
    assert events[0] == "SessionStart" and events.count("UserPromptSubmit") == 2

    start = steps[0]
    assert DIRECTIVE in start["delivered"] and DIRECTIVE in start["shown"]

    (recall,) = [s for s in steps if s["event"] == "UserPromptSubmit" and s["delivered"]]
    assert recall is next(s for s in steps if s["event"] == "UserPromptSubmit")  # at the first prompt, the shift
    assert DECISION in recall["delivered"] and DECISION in recall["shown"]

    (anchored,) = [s for s in steps if s["event"] == "PreToolUse" and s["delivered"]]
    assert "Read" in anchored["what"] and "billing/rounding.py" in anchored["what"]
    assert anchored["delivered"] == [GOTCHA] and GOTCHA in anchored["shown"]

    # The turn's first change (a test run) is refused once, until the agent searches memory itself (run for real).
    (refused,) = [s for s in steps if s["refused"]]
    assert "pytest" in refused["what"] and "search" in refused["shown"]
    searched = steps[steps.index(refused) + 1]
    assert "gate search" in searched["what"] and DECISION in searched["found"]
    again = steps[steps.index(refused) + 2]
    assert again["what"] == refused["what"] and not again["refused"]

    stops = [s for s in steps if s["event"] == "Stop"]
    assert [s["blocked"] for s in stops] == [True, False, False]
    held = stops[0]
    assert held["shown"].strip() and "gate remember" in held["shown"]
    # The outcome: the agent stores it (run for real in the demo's store), and the next Stop is let through.
    after = steps[steps.index(held) + 1 :]
    (stored,) = [s["ran"] for s in after if s["ran"]]
    assert stored.startswith("m-") and stored not in {DECISION, GOTCHA, DIRECTIVE}
    assert steps.index(stops[1]) > steps.index(next(s for s in after if s["ran"]))

    # Nothing of the user's home or gate home was read into or written by the demo.
    assert (_tree(isolated_home), _tree(home)) == before


def test_the_text_report_names_each_step(isolated_home: Path) -> None:
    proc = _demo()
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for memory in (DECISION, GOTCHA, DIRECTIVE):
        assert memory in out
    assert "RECALL" in out and "GOTCHA" in out and "HELD" in out and "REFUSED once" in out
    assert "1 recall" in out and "1 block" in out and "1 change refused until 1 search" in out


def test_keep_leaves_a_store_with_the_stored_fix(isolated_home: Path) -> None:
    proc = _demo("--json", "--keep")
    steps = _steps(proc)
    kept = Path(json.loads(proc.stdout)["kept"])
    try:
        (stored,) = [s["ran"] for s in steps if s["ran"]]
        env = {**os.environ, "GATE_HOME": str(kept / "gate-home"), "HOME": str(kept / "home")}
        shown = subprocess.run(
            [str(Path(sys.executable).parent / "gate"), "show", stored, "--json", "--project", str(kept / "project")],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        memory = json.loads(shown.stdout)
        assert json.dumps(memory).count(stored) >= 1 and "ROUND_HALF_EVEN" in json.dumps(memory)
    finally:
        import shutil

        shutil.rmtree(kept, ignore_errors=True)


def test_the_sample_is_a_transcript_replay_reads() -> None:
    """The recording is in Claude Code's format: the replay's reader finds every event the demo plays."""
    timeline = read_timeline(str(SAMPLE / "session.jsonl"))
    assert not timeline.skipped and not timeline.repaired
    names = [step.name for step in timeline.steps]
    assert names.count("UserPromptSubmit") == 2 and names.count("Stop") == 3 and "PreToolUse" in names
    for line in (SAMPLE / "memories.jsonl").read_text(encoding="utf-8").splitlines():
        assert "project" not in json.loads(line)  # the store takes the project it is imported into


def test_sample_to_writes_the_sample_set_in_the_project_and_never_overwrites(tmp_path: Path, project: Path) -> None:
    target = tmp_path / "sample"
    first = subprocess.run(
        [str(Path(sys.executable).parent / "gate"), "demo", "--sample-to", str(target)],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    transcript = (target / "session.jsonl").read_text()
    assert "__PROJECT__" not in transcript and json.dumps(str(project.resolve()))[1:-1] in transcript
    assert (target / "memories.jsonl").read_text() == (SAMPLE / "memories.jsonl").read_text()
    (target / "session.jsonl").write_text("mine\n")
    again = subprocess.run(
        [str(Path(sys.executable).parent / "gate"), "demo", "--sample-to", str(target)],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert again.returncode != 0 and "nothing was written" in again.stderr
    assert (target / "session.jsonl").read_text() == "mine\n"
