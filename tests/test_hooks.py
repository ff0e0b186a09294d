"""Each hook entry driven as Claude Code drives it: real stdin JSON, real transcript JSONL, a fresh process."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import support

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript, fixed_bug_turn

from gate.paths import audit_log_file, error_log_file

Hook = Callable[..., tuple[str, int]]


def event(project: Path, name: str, session: str = "sess-1", transcript: Path | None = None, **fields: Any) -> dict:
    return {
        "session_id": session,
        "transcript_path": str(transcript) if transcript else str(project / "missing.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        **fields,
    }


def audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def context_of(out: str, event_name: str) -> str:
    data = json.loads(out)
    assert data["hookSpecificOutput"]["hookEventName"] == event_name
    return data["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def seeded(gate) -> dict[str, str]:
    ids = {}
    for key, args in {
        "waterfall": ("Reserve account waterfall triggers at 30 days overdue", "--kind", "decision"),
        "rounding": ("Ledger rounding is banker's rounding (ROUND_HALF_EVEN)", "--kind", "gotcha",
                     "--body", "Decimal quantize; floats drift"),
        "directive": ("Never push to main directly; open a pull request", "--kind", "directive"),
        "task": ("Migrate the billing cron to the scheduler service", "--kind", "task"),
    }.items():
        code, out, err = gate("remember", *args)
        assert code == 0, err
        ids[key] = out.strip()
    return ids


def test_shift_delivers_the_memory_and_follow_up_does_not_fire(project: Path, seeded, hook: Hook) -> None:
    out, code = hook(event(project, "UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"))
    assert code == 0
    text = context_of(out, "UserPromptSubmit")
    assert text.startswith("MEMORY SEARCH REQUIRED:")
    assert "Search memory first for:" in text and "waterfall" in text
    assert seeded["waterfall"] in text and "30 days overdue" in text
    assert "show ID" in text
    follow_up = "And for the waterfall on the reserve account, why 30 days?"
    out, code = hook(event(project, "UserPromptSubmit", prompt=follow_up))
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "SKIP_NO_SHIFT"


def test_delivered_memory_not_repeated_until_compaction_rearms(project: Path, seeded, hook: Hook) -> None:
    prompt = "When does the reserve account waterfall trigger?"
    out, _ = hook(event(project, "UserPromptSubmit", prompt=prompt))
    assert seeded["waterfall"] in out
    # enough other topics that the waterfall decays out of the session's recent topic
    for other in ["Let us talk about the deploy pipeline for the frontend", "Which Kubernetes namespace runs cron?",
                  "Upgrade the eslint config to flat files", "Profile the image resizer memory usage",
                  "Write release notes for the mobile app"]:
        hook(event(project, "UserPromptSubmit", prompt=other))
    out, _ = hook(event(project, "UserPromptSubmit", prompt="Back to the reserve account waterfall trigger, again"))
    assert seeded["waterfall"] not in out
    assert audit()[-1]["reason"] == "SUPPRESSED_ALREADY_DELIVERED"
    assert seeded["waterfall"] in audit()[-1]["suppressed"]
    out, code = hook(event(project, "PreCompact", trigger="manual", custom_instructions=""))
    assert (out, code) == ("", 0)
    out, _ = hook(event(project, "SessionStart", source="compact"))
    text = context_of(out, "SessionStart")
    assert seeded["directive"] in text and seeded["task"] in text
    out, _ = hook(event(project, "UserPromptSubmit", prompt="Reserve account waterfall trigger once more"))
    assert seeded["waterfall"] in context_of(out, "UserPromptSubmit")
    assert audit()[-1]["reason"] == "FIRED_AFTER_COMPACTION"


def test_trivial_and_slash_prompts_never_fire(project: Path, seeded, hook: Hook) -> None:
    for prompt in ["yes", "ok do it", "continue", "42", "/compact"]:
        out, code = hook(event(project, "UserPromptSubmit", prompt=prompt))
        assert (out, code) == ("", 0), prompt
    assert {r["reason"] for r in audit()} == {"SKIP_TRIVIAL_PROMPT"}


def test_shift_without_matching_memory_delivers_nothing_and_asks_for_a_search(
    project: Path, seeded, hook: Hook
) -> None:
    # (Silent until issue 29: a shift now asks for the agent's own search whenever the store holds something to
    # find — its words reach what the prompt's do not. An empty store still hears nothing: test_search_first.py.)
    out, code = hook(event(project, "UserPromptSubmit", prompt="How do I center a div with flexbox in CSS?"))
    assert code == 0
    text = context_of(out, "UserPromptSubmit")
    assert not [memory_id for memory_id in seeded.values() if memory_id in text], text
    assert "search WORDS`" in text
    assert audit()[-1]["reason"] == "SKIP_NO_HITS" and audit()[-1]["decision"] == "asked"
    assert audit()[-1]["delivered"] == []


def test_session_start_injects_directives_and_open_tasks(project: Path, seeded, hook: Hook) -> None:
    out, code = hook(event(project, "SessionStart", source="startup"))
    text = context_of(out, "SessionStart")
    assert seeded["directive"] in text and "Never push to main" in text
    assert seeded["task"] in text
    # Other memories stand in the index (one line each), not delivered in full: their cued moment still comes.
    assert f"{seeded['waterfall']} · decision" in text and "30 days overdue" in text
    assert seeded["waterfall"] not in audit()[-1]["delivered"] and seeded["waterfall"] in audit()[-1]["indexed"]


def test_a_done_task_no_longer_shows_at_session_start(project: Path, seeded, gate, hook: Hook) -> None:
    """Issue 44: a finished task kept showing at every session start, with no way to mark it done."""
    out, _ = hook(event(project, "SessionStart", session="sess-0", source="startup"))
    assert seeded["task"] in context_of(out, "SessionStart") and " done ID`" in context_of(out, "SessionStart")
    code, out, err = gate("done", seeded["task"])
    assert code == 0, err
    assert f"gate done {seeded['task']} --reopen" in out
    out, _ = hook(event(project, "SessionStart", source="startup"))
    text = context_of(out, "SessionStart")
    assert seeded["task"] not in text and "billing cron" not in text and seeded["directive"] in text
    code, out, _ = gate("list", "--status", "done")
    assert code == 0 and seeded["task"] in out
    assert gate("search", "billing cron scheduler")[1].count(seeded["task"]) == 0  # nor found as open work
    code, out, err = gate("done", seeded["task"], "--reopen")
    assert code == 0, err
    out, _ = hook(event(project, "SessionStart", session="sess-2", source="startup"))
    assert seeded["task"] in context_of(out, "SessionStart")
    # only a task is done; a memory that no longer holds is forgotten
    code, _, err = gate("done", seeded["waterfall"])
    assert code != 0 and "not a task" in err and f"gate forget {seeded['waterfall']}" in err


def fix_turn(path: Path, *, store: bool = False) -> Path:
    path.write_text(fixed_bug_turn(str(path.parent), store=store).text())
    return path


def test_fix_turn_blocks_with_memory_check(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    transcript = fix_turn(tmp_path / "t.jsonl")
    out, code = hook(event(project, "Stop", transcript=transcript, stop_hook_active=False))
    assert code == 0
    data = support.stop_verdict(out)
    assert data is not None and data["decision"] == "block"
    assert data["reason"].startswith("MEMORY CHECK: this turn")
    assert "fix" in data["reason"].splitlines()[0]
    assert "remember" in data["reason"] and "If it is already saved" in data["reason"]
    assert audit()[-1]["reason"] == "BLOCKED_WRITEBACK"


def test_same_turn_with_gate_remember_is_allowed(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    transcript = fix_turn(tmp_path / "t.jsonl", store=True)
    out, code = hook(event(project, "Stop", transcript=transcript, stop_hook_active=False))
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "ALLOW_ALREADY_STORED"


def test_stop_hook_active_never_blocks_and_records_outcome(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    transcript = fix_turn(tmp_path / "t.jsonl")
    out, _ = hook(event(project, "Stop", transcript=transcript, stop_hook_active=False))
    assert support.stop_verdict(out) is not None
    # the agent answers the block: "already saved"
    t = Transcript(cwd=str(project))
    text = transcript.read_text()
    t.hook_feedback("MEMORY CHECK: ...")
    t.say("That is already saved in memory.")
    transcript.write_text(text + t.text())
    out, code = hook(event(project, "Stop", transcript=transcript, stop_hook_active=True))
    assert (out, code) == ("", 0)
    last = audit()[-1]
    assert last["reason"] == "ALLOW_STOP_ACTIVE"
    assert last["outcome"] == "acknowledged"


def distinct_fix_turn(path: Path, n: int) -> Path:
    """A consequential turn of its own: the n-th fix, in a file, a test and names no other turn shares (the same
    fix again is its debugging loop going on, which blocks once: tests/test_fix_guard.py)."""
    t = Transcript(cwd=str(path.parent))
    t.prompt(f"Report number {n} is wrong, fix it")
    t.tool("Bash", {"command": f"pytest tests/test_report{n}.py"}, "1 failed, 3 passed", is_error=True)
    t.tool("Edit", {"file_path": f"src/report{n}.py", "old_string": "a", "new_string": "b"}, "ok")
    t.tool("Bash", {"command": f"pytest tests/test_report{n}.py"}, "4 passed in 0.2s")
    t.say(f"The cause was FIELD_{n} read as field_{n}x in render{n}(); fixed it and the tests pass now.")
    path.write_text(t.text())
    return path


def test_cap_holds_over_twenty_consequential_turns(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    blocks = 0
    for n in range(20):
        transcript = distinct_fix_turn(tmp_path / "t.jsonl", n)
        out, _ = hook(event(project, "Stop", transcript=transcript, stop_hook_active=False))
        blocks += bool(out)
        out, _ = hook(event(project, "Stop", transcript=transcript, stop_hook_active=True))
        assert out == ""
    assert blocks == 5
    reasons = [r["reason"] for r in audit() if r["event"] == "Stop"]
    assert reasons.count("ALLOW_CAPPED") == 15
    outcomes = [r.get("outcome") for r in audit() if r.get("outcome")]
    assert outcomes == ["ignored"] * 5


def test_writeback_off_switch(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    transcript = fix_turn(tmp_path / "t.jsonl")
    stop = event(project, "Stop", transcript=transcript, stop_hook_active=False)
    out, code = hook(stop, env={"GATE_WRITEBACK": "off"})
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "ALLOW_DISABLED"
    out, _ = hook(event(project, "UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"),
                  env={"GATE_WRITEBACK": "off"})
    assert seeded["waterfall"] in out


def test_trivial_turn_is_allowed(project: Path, seeded, hook: Hook, tmp_path: Path) -> None:
    t = Transcript(cwd=str(project))
    t.prompt("what does total() return?")
    t.tool("Read", {"file_path": "src/ledger.py"}, "def total(): return sum(...)")
    t.say("It returns the sum of the line amounts as a Decimal.")
    path = tmp_path / "t.jsonl"
    path.write_text(t.text())
    out, code = hook(event(project, "Stop", transcript=path, stop_hook_active=False))
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "ALLOW_NO_SIGNAL"


def test_missing_transcript_falls_back_to_last_message(project: Path, seeded, hook: Hook) -> None:
    out, code = hook(event(project, "Stop", stop_hook_active=False,
                           last_assistant_message="We decided to use Postgres advisory locks because Redis "
                           "locks expired under load."))
    assert code == 0
    assert support.stop_verdict(out) is not None


@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[]", b'{"hook_event_name": 5}', b'{"hook_event_name": "Stop", "cwd": 7}', b"\xff\xfe{"],
)
def test_malformed_stdin_exits_zero_silently(raw: bytes, project: Path) -> None:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=raw, capture_output=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == b""
    if raw not in (b'{"hook_event_name": "Stop", "cwd": 7}',):
        assert Path(error_log_file()).exists()


def test_broken_store_fails_open_and_logs(project: Path, seeded, hook: Hook, isolated_home: Path) -> None:
    import shutil

    index_root = isolated_home / "cache" / "index"
    shutil.rmtree(index_root)
    index_root.write_text("not a directory")  # the index cannot be created or opened
    out, code = hook(event(project, "UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"))
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "FAILED_OPEN"
    assert Path(error_log_file()).read_text().strip()


def test_precompact_prints_nothing_and_never_blocks(project: Path, hook: Hook) -> None:
    out, code = hook(event(project, "PreCompact", trigger="auto", custom_instructions=""))
    assert (out, code) == ("", 0)
    assert audit()[-1]["reason"] == "MARKED_COMPACTION"


def test_bad_setting_costs_one_setting_not_the_gates(project: Path, seeded, hook: Hook) -> None:
    (project / ".gate").mkdir(exist_ok=True)
    (project / ".gate" / "config.toml").write_text('writeback_cap = "lots"\nrecall_budget_tokens = -5\n')
    out, code = hook(event(project, "UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"))
    assert code == 0
    assert seeded["waterfall"] in context_of(out, "UserPromptSubmit")
    log = Path(error_log_file()).read_text()
    assert "writeback_cap" in log and "recall_budget_tokens" in log


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param({"recall.toml": "[fire\nmin_z = 2.5\n"}, id="syntax-error"),
        pytest.param({"recall.toml": '[fire]\nmin_z = "high"\n'}, id="wrong-type"),
        pytest.param({"topic_shift.toml": "[shift]]\n", "recall.toml": "min_z ==\n"}, id="two-layers"),
    ],
)
def test_broken_project_rules_layer_is_left_out_and_named_once(
    project: Path, seeded, hook: Hook, broken: dict[str, str]
) -> None:
    """A teammate's broken `.gate/rules/*.toml` must not turn the gates off: the hooks go on with the layers
    below it, and the error log names the file in one line (not once per hook run)."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    for name, text in broken.items():
        (rules / name).write_text(text)
    out, code = hook(event(project, "UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"))
    assert code == 0
    assert seeded["waterfall"] in context_of(out, "UserPromptSubmit")
    assert audit()[-1]["decision"] != "failed_open"
    hook(event(project, "UserPromptSubmit", session="sess-2", prompt="How is ledger rounding done, banker's?"))
    lines = [json.loads(line) for line in Path(error_log_file()).read_text().splitlines()]
    for name in broken:
        named = [line for line in lines if str(rules / name) in line["message"]]
        assert len(named) == 1, lines
        assert named[0]["kind"] == "rules" and "gate doctor" in named[0]["message"]
    assert not [line for line in lines if line.get("kind") != "rules"], lines


def test_startup_prunes_old_ledgers_with_their_locks(project: Path, hook: Hook) -> None:
    import os
    import time

    from gate.paths import sessions_dir

    hook(event(project, "SessionStart", session="old-session", source="startup"))
    old = Path(sessions_dir()) / "old-session.json"
    assert old.exists() and (Path(sessions_dir()) / "old-session.lock").exists()
    month_ago = time.time() - 30 * 86400
    os.utime(old, (month_ago, month_ago))
    day_ago = time.time() - 86400 - 60  # the last sweep (the first start's) a day back: the next start sweeps
    os.utime(Path(sessions_dir()) / ".swept", (day_ago, day_ago))
    hook(event(project, "SessionStart", session="new-session", source="startup"))
    assert not old.exists() and not (Path(sessions_dir()) / "old-session.lock").exists()
    assert (Path(sessions_dir()) / "new-session.json").exists()


def test_startup_sweeps_ledgers_at_most_once_a_day(project: Path, hook: Hook, monkeypatch) -> None:
    """A session start does not stat every past ledger: thousands of them made each start slower (issue 31)."""
    import os
    import time

    from gate.paths import sessions_dir
    from gate.session import ledger

    hook(event(project, "SessionStart", session="old-session", source="startup"))  # sweeps: never swept before
    old = Path(sessions_dir()) / "old-session.json"
    month_ago = time.time() - 30 * 86400
    os.utime(old, (month_ago, month_ago))
    hook(event(project, "SessionStart", session="next-session", source="startup"))
    assert old.exists()  # swept a moment ago: the month-old ledger waits for tomorrow's sweep
    scanned: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(ledger.os, "scandir", lambda path: scanned.append(path) or real_scandir(path))
    assert ledger.clean_old_ledgers(14) == 0 and scanned == []  # the stamp's stat, not a listing
    day_ago = time.time() - 86400 - 60
    os.utime(Path(sessions_dir()) / ".swept", (day_ago, day_ago))
    assert ledger.clean_old_ledgers(14) == 1 and not old.exists() and len(scanned) == 1


# --- the index tier's promises (issue 32 item 8) ---------------------------------------------------------------------
def test_a_memory_shown_in_full_at_session_start_is_not_also_an_index_line(project: Path, gate, hook: Hook) -> None:
    code, out, err = gate("remember", "Deploys are frozen on Fridays", "--kind", "decision",
                          "--on", "event:session-start")
    assert code == 0, err
    cued = out.strip()
    code, out, err = gate("remember", "Invoices are batched nightly at two", "--kind", "decision")
    assert code == 0, err
    listed = out.strip()
    text = context_of(hook(event(project, "SessionStart", source="startup"))[0], "SessionStart")
    record = audit()[-1]
    assert cued in record["delivered"] and cued not in record["indexed"]  # in full, so no line of the index
    assert listed in record["indexed"]
    assert text.count(cued) == 1


def test_the_index_holds_at_most_its_max_lines(project: Path, gate, hook: Hook) -> None:
    from gate.rules import load_rules

    most = int(load_rules("recall")["index"]["max_lines"])
    words = ["amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"]
    for n in range(most + 5):  # more memories of the index kinds than it has lines
        title = f"Queue {words[n % 10]} {words[n // 10]} drains through worker pool {n} at {n % 24}:00"
        code, _, err = gate("remember", title, "--kind", "gotcha" if n % 2 else "finding", "--new")
        assert code == 0, err
    context_of(hook(event(project, "SessionStart", source="startup"))[0], "SessionStart")
    record = audit()[-1]
    assert len(record["indexed"]) == most
    assert record["index_beyond_max_lines"] == 5
