"""Staleness of anchored memories: the hash check, the mark on delivered lines, and `gate verify`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gate.memory.cues import staleness

GATE_BIN = Path(sys.executable).parent / "gate"


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GATE_BIN), *args, "--project", str(project)], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))


def read_event(project: Path, session: str, path: str) -> str | None:
    event = {"session_id": session, "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Read",
             "tool_input": {"file_path": str(project / path)}}
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(), capture_output=True,
                          timeout=60, env=dict(os.environ))
    assert proc.returncode == 0
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else None


def test_check_and_describe(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("one\n")
    (tmp_path / "b.py").write_text("two\n")
    anchors = staleness.anchor_hashes(tmp_path, ["a.py", "b.py", "gone.py"])
    assert set(anchors) == {"a.py", "b.py"}
    record = {"anchors": {**anchors, "gone.py": "sha256:00"}, "created": "2026-03-04T05:06:07Z", "scope": "private"}
    (tmp_path / "a.py").write_text("one, edited\n")
    problems = staleness.check(record, tmp_path)
    assert problems == [("a.py", staleness.CHANGED), ("gone.py", staleness.MISSING)]
    assert staleness.stale_mark(record, tmp_path) == (
        "stale: a.py changed since this was written on 2026-03-04; gone.py is missing (anchored on 2026-03-04)"
    )
    assert staleness.stale_mark({"anchors": anchors, "created": "2026-03-04"}, tmp_path).startswith("stale: a.py")
    # a user-scope memory written in another project is not checked against this one's files
    assert staleness.check({**record, "scope": "user", "project": "/elsewhere"}, tmp_path) == []


def test_anchor_globs_expand_like_path_triggers(tmp_path: Path) -> None:
    for name in ("src/db/models.py", "src/db/sub/x.py", "src/api/views.py", ".git/config"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert set(staleness.anchor_hashes(tmp_path, ["src/db/**"])) == {"src/db/models.py", "src/db/sub/x.py"}
    assert set(staleness.anchor_hashes(tmp_path, ["src/db"])) == {"src/db/models.py", "src/db/sub/x.py"}
    assert set(staleness.anchor_hashes(tmp_path, ["**/*.py"])) == {
        "src/db/models.py", "src/db/sub/x.py", "src/api/views.py"
    }
    assert len(staleness.anchor_hashes(tmp_path, ["**"], max_files=2)) == 2


def test_an_edited_anchored_file_makes_the_delivered_line_stale_until_verified(project: Path) -> None:
    ledger = project / "src" / "payments" / "ledger.py"
    ledger.parent.mkdir(parents=True)
    ledger.write_text("ROUNDING = 'half-even'\n")
    proc = cli(project, "remember", "Ledger rounding is half-even", "--kind", "gotcha",
               "--path", "src/payments/ledger.py")
    memory = proc.stdout.strip()
    fresh = read_event(project, "s1", "src/payments/ledger.py")
    # the footer always mentions `gate verify` for stale notes; the mark itself is "[stale: …]"
    assert fresh is not None and memory in fresh and "[stale:" not in fresh
    assert cli(project, "verify").returncode == 0

    ledger.write_text("ROUNDING = 'half-up'\n")
    out = read_event(project, "s2", "src/payments/ledger.py")
    assert out is not None
    line = next(line for line in out.splitlines() if memory in line)
    assert "[stale: src/payments/ledger.py changed since this was written on 20" in line
    report = cli(project, "verify", "--json")
    assert report.returncode == 1
    data = json.loads(report.stdout)
    assert data["stale"] == 1
    assert data["memories"][0]["stale"] == [{"path": "src/payments/ledger.py", "state": "changed"}]
    text = cli(project, "verify")
    assert "stale: src/payments/ledger.py changed" in text.stdout and f"gate verify {memory} --refresh" in text.stdout

    assert cli(project, "verify", memory, "--refresh").returncode == 0
    assert cli(project, "verify").returncode == 0
    out = read_event(project, "s3", "src/payments/ledger.py")
    assert out is not None and "[stale:" not in out

    ledger.unlink()
    out = read_event(project, "s4", "src/payments/ledger.py")  # a Read of a deleted file still cues
    assert out is not None and "src/payments/ledger.py is missing" in out
    assert cli(project, "verify", memory, "--retire").returncode == 0
    assert read_event(project, "s5", "src/payments/ledger.py") is None
    assert cli(project, "verify").returncode == 0


def test_verify_names_anchored_files_that_do_not_exist_yet(gate, project: Path) -> None:
    """A memory anchored to a file about to be written is not "no anchored memories": verify names the path
    that matches nothing yet, and once the file exists, that it can be recorded. `remember` notes it at once."""
    code, out, err = gate("remember", "The outbox worker must commit before it acks", "--kind", "gotcha",
                          "--path", "src/outbox.py")
    assert code == 0
    memory_id = out.strip()
    assert "note: --path src/outbox.py matches no file yet" in err and f"gate verify {memory_id} --refresh" in err
    code, out, _ = gate("verify")
    assert code == 0
    assert "no anchored memories" not in out
    assert "--path src/outbox.py matches no file yet" in out
    assert "1 memory anchored to files not recorded yet" in out
    (project / "src").mkdir()
    (project / "src" / "outbox.py").write_text("def ack(): ...\n")
    code, out, _ = gate("verify")
    assert code == 0 and "matches files now that were not there" in out
    assert gate("verify", memory_id, "--refresh")[0] == 0
    code, out, _ = gate("verify")
    assert code == 0 and "0 of 1 anchored memory stale" in out and "not recorded" not in out


def test_remember_with_an_existing_path_says_nothing_more(gate, project: Path) -> None:
    (project / "app.py").write_text("x = 1\n")
    code, out, err = gate("remember", "The app module holds the one global", "--kind", "gotcha", "--path", "app.py")
    assert code == 0 and "note:" not in err


BILLING = """import decimal

ROUNDING = decimal.ROUND_HALF_EVEN
RATE = 0.2


def total(items):
    return sum(item.price for item in items)


def tax(amount):
    return amount * RATE
"""


def _stale_ids(gate) -> set[str]:
    code, out, _ = gate("verify", "--json")
    report = json.loads(out)
    assert code == (1 if report["stale"] else 0)
    return {m["id"] for m in report["memories"] if m["stale"]}


def test_an_edit_marks_stale_only_the_memories_about_what_it_changed(gate, project: Path) -> None:
    """Issue 44: any edit marked every memory anchored to the file stale (5 of 10 after a few edits). A memory is
    stale when the lines it is about changed, not when the file did."""
    billing = project / "billing.py"
    billing.write_text(BILLING)

    def remember(title: str) -> str:
        code, out, err = gate("remember", title, "--kind", "gotcha", "--path", "billing.py", "--new")
        assert code == 0, err
        return out.strip()

    rounding = remember("Invoice rounding is ROUND_HALF_EVEN: never round up")
    tax = remember("Tax applies RATE to the net amount, not the gross")
    billing.write_text(BILLING.replace("item.price for item", "item.price * item.quantity for item"))
    assert _stale_ids(gate) == set()  # total() changed: neither memory is about it
    record = json.loads(gate("show", rounding, "--json")[1])
    assert staleness.stale_mark(record, project) == ""
    assert record["anchor_lines"]["billing.py"]["terms"][:2] == ["round", "half"], record

    billing.write_text(billing.read_text().replace("ROUND_HALF_EVEN", "ROUND_UP"))
    assert _stale_ids(gate) == {rounding}  # the rounding line changed; the tax lines did not
    record = json.loads(gate("show", rounding, "--json")[1])
    assert staleness.stale_mark(record, project).startswith("stale: billing.py changed since")

    billing.write_text(billing.read_text().replace("amount * RATE", "(amount - discount) * RATE"))
    assert _stale_ids(gate) == {rounding, tax}


def test_a_memory_without_a_record_of_its_lines_is_stale_on_any_change_until_refreshed(gate, project: Path) -> None:
    """Written before anchor_lines (or naming nothing of the file): nothing tells what it is about, so any change
    counts, as before; `gate verify ID --refresh` records its lines."""
    billing = project / "billing.py"
    billing.write_text(BILLING)
    code, out, err = gate("remember", "Invoice rounding is ROUND_HALF_EVEN: never round up", "--kind", "gotcha",
                          "--path", "billing.py")
    assert code == 0, err
    memory = out.strip()
    record = json.loads(gate("show", memory, "--json")[1])
    old = {**record, "anchor_lines": {}}
    billing.write_text(BILLING.replace("item.price for item", "item.price * item.quantity for item"))
    assert staleness.stale_mark(old, project).startswith("stale: billing.py changed")
    assert staleness.stale_mark(record, project) == ""
    assert gate("verify", memory, "--refresh")[0] == 0
    refreshed = json.loads(gate("show", memory, "--json")[1])
    assert refreshed["anchor_lines"]["billing.py"]["hash"] == record["anchor_lines"]["billing.py"]["hash"]
    assert refreshed["anchors"] != record["anchors"]
