"""Crashes: SIGKILL at any write never leaves half a memory, a stale lock, or an index that stays behind.

Kill points are placed by the process itself (tests/support.py: it stops just before its N-th write to the file
system, and is killed there), not by sleeping a guess of how far it got.

- `gate remember` killed just before each of its writes, one run per write: every file in the store is a whole
  memory (title and body as written) or absent; the index catches up by itself (the hook's own catch-up, no
  `gate reindex`); the next writer gets the index writer: its memory is indexed when the command returns.
- tantivy's writer lock is an flock (held by the open file, released by the kernel when the holder dies): a
  process killed while holding the index writer or a session ledger does not block the next one.
- Hooks killed just before each of their writes leave whole audit lines and a loadable ledger.

Sizes from the environment: GATE_CRASH_KILLS (default 24 `gate remember` kills), GATE_CRASH_HOOK_KILLS (16).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import support

from gate.memory.index.read import IndexBusy, MemoryIndex
from gate.memory.search import search
from gate.memory.store.files import TEMP_PREFIX
from gate.memory.store.store import Store
from gate.paths import ProjectPaths, audit_log_file
from gate.session.ledger import open_ledger, read_ledger

KILLS = int(os.environ.get("GATE_CRASH_KILLS", "24"))
HOOK_KILLS = int(os.environ.get("GATE_CRASH_HOOK_KILLS", "16"))
GATE_BIN = Path(sys.executable).parent / "gate"

Gate = Callable[..., tuple[int, str, str]]


def report(figures: dict[str, Any]) -> None:
    support.report("crash", figures)


def body_of(token: str) -> str:
    # long enough that the write is not a single page, and every line says whose it is
    return "\n".join(f"{token} line {i}: the reserve account waterfall detail number {i}" for i in range(600))


def remember_cmd(project: Path, token: str) -> list[str]:
    return [str(GATE_BIN), "remember", f"Crash probe {token} reserve waterfall", "--body", body_of(token),
            "--kind", "finding", "--tag", token, "--project", str(project), "--json"]


def check_store_whole(store: Store, expected: dict[str, str]) -> dict[str, str]:
    """Every memory file parses and holds exactly what its writer wrote; returns token -> id of those present."""
    assert not store.corrupt(), [(c.path.name, c.reason) for c in store.corrupt()]
    present = {}
    for memory in store.memories():
        token = memory.tags[0] if memory.tags else ""
        if token not in expected:
            continue  # a seed
        assert memory.title == f"Crash probe {token} reserve waterfall"
        assert memory.body == expected[token].strip()
        present[token] = memory.id
    return present


def timed_remember(project: Path, token: str) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(remember_cmd(project, token), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return time.perf_counter() - started, json.loads(proc.stdout)["id"]


@pytest.mark.slow
def test_sigkilled_remember_leaves_whole_memory_or_none(project: Path, gate: Gate, tmp_path: Path) -> None:
    code, _, err = gate("remember", "Seed memory about the deploy pipeline", "--kind", "decision")
    assert code == 0, err
    store = Store(ProjectPaths.for_cwd(project))
    # Kill points: just before each write `gate remember` makes to the store, the index or the state (counted
    # on an uninterrupted run; a process stops itself there and is killed, no clock guessing where it is).
    under = [os.environ["GATE_HOME"], str(project)]
    site = tmp_path / "stop-at-write"
    # the second run's count: the first remember after the seed also does one-time work (the seed's index and
    # cue table catching up) that later runs, the killed ones, do not repeat
    support.writes_of_a_run(remember_cmd(project, "calibration0"), site, under)
    writes = support.writes_of_a_run(remember_cmd(project, "calibration1"), site, under)
    points = sorted({round(k * writes / KILLS) for k in range(KILLS)})
    expected = {"calibration0": body_of("calibration0"), "calibration1": body_of("calibration1")}
    outcomes: Counter[str] = Counter()
    for k, point in enumerate(points):
        token = f"kill{k}x"
        expected[token] = body_of(token)
        killed = support.kill_at_write(remember_cmd(project, token), site, under, point) is None
        outcomes["killed" if killed else "finished_before_kill"] += 1
        present = check_store_whole(store, expected)  # after every kill, not only at the end
        if killed and token in present:
            outcomes["killed_after_file_written"] += 1  # the index had not caught up, or not finished
    assert outcomes["killed"] >= len(points) - 2, outcomes  # the points lie inside the run, not past its end
    present = check_store_whole(store, expected)
    for k in range(len(points)):
        outcomes["kept_whole" if f"kill{k}x" in present else "left_none"] += 1
    leftovers = [p.name for p in Path(store.paths.private_store).iterdir() if p.name.startswith(TEMP_PREFIX)]

    # the index catches up by itself, on the hook's path (no writer wait, no `gate reindex`)
    index = MemoryIndex(store.paths)
    index.catch_up(wait_seconds=0.0)
    for token, memory_id in present.items():
        assert memory_id in [h.id for h in search(index, token, limit=3).hits], token

    # no killed process left the writer lock held, and the next writer gets it: a writer that could not
    # would give up after its wait and leave its memory out of the index until a later catch-up
    lock = Path(store.paths.index_dir) / ".tantivy-writer.lock"
    assert not lock.exists() or flock_free(lock)
    _, final_id = timed_remember(project, "afterwards")
    assert MemoryIndex(store.paths).get(final_id) is not None  # indexed by the command itself
    code, out, err = gate("reindex", "--check", "--json")
    assert json.loads(out)["consistent"] is True, out + err
    code, out, _ = gate("search", "afterwards", "--json")
    assert final_id in [h["id"] for h in json.loads(out)["hits"]]
    report({"remember_kills": len(points), **outcomes, "temp_files_left": len(leftovers),
            "writes_of_a_run": writes, "lost_or_torn": 0})


def test_commit_after_a_writer_died_mid_commit(project: Path, gate: Gate, tmp_path: Path) -> None:
    """Deterministic replay of what the kill loop above found: a writer dies after writing a segment's
    `.del` file but before meta.json adopts it; the next writer repeats the same deletes, reaches the same
    opstamp, and its commit met FileAlreadyExists — every catch-up, every `gate` command, from then on."""
    import shutil

    lines = "\n".join(json.dumps({"id": f"mem-{i}", "kind": "finding", "title": f"Memory {i} about ledgers"})
                      for i in range(3))
    code, _, err = gate("import", "-", stdin=lines)
    assert code == 0, err
    paths = ProjectPaths.for_cwd(project)
    index_dir = Path(paths.index_dir)
    # An earlier crash lost the manifests' record of mem-1 (the index has it, files.json does not) ...
    files = json.loads((index_dir / "files.json").read_text())
    files["scopes"]["private"].pop("mem-1.toml")
    (index_dir / "files.json").write_text(json.dumps(files))
    dirs = json.loads((index_dir / "dirs.json").read_text())
    dirs["dirs"]["private"]["mtime_ns"] = -1
    (index_dir / "dirs.json").write_text(json.dumps(dirs))
    before = tmp_path / "before"
    shutil.copytree(index_dir, before)
    # ... so the next catch-up deletes mem-1's document (a .del file for the 3-document segment) and re-adds it
    # No other writer exists here: the lock is free, so no wait for it (a wait would only hide a lock left held).
    first = MemoryIndex(paths).catch_up(wait_seconds=0.0)
    assert not first.skipped_busy and first.added == 1
    assert any(name.endswith(".del") for name in os.listdir(index_dir))
    # that writer "dies" before meta.json and the manifests move on: its files stay, unreferenced
    for name in ("meta.json", "dirs.json", "files.json"):
        shutil.copy(before / name, index_dir / name)
    report = MemoryIndex(paths).catch_up(wait_seconds=0.0)  # raised FileAlreadyExists before the fix
    assert not report.skipped_busy and report.added == 1
    code, out, err = gate("remember", "Written after the crash", "--kind", "finding", "--json")
    assert code == 0, err
    code, out, _ = gate("reindex", "--check", "--json")
    assert json.loads(out)["consistent"] is True
    code, out, _ = gate("search", "ledgers", "--json")
    assert {"mem-0", "mem-1", "mem-2"} <= {h["id"] for h in json.loads(out)["hits"]}


# --- locks held by a process that dies ---------------------------------------------------------------------------
HOLD_WRITER = r'''
import sys, time
from gate.memory.index.read import MemoryIndex
from gate.paths import ProjectPaths
index = MemoryIndex(ProjectPaths.for_cwd(sys.argv[1]))
writer = index._writer(10.0)
print("locked", flush=True)
time.sleep(600)
'''

HOLD_LEDGER = r'''
import sys, time
from gate.session.ledger import open_ledger
with open_ledger(sys.argv[1]) as ledger:
    ledger.writeback_blocks = 99  # never saved: the process dies inside the lock
    print("locked", flush=True)
    time.sleep(600)
'''


def hold(script: str, arg: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", script, arg], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"locked", proc.stderr.read().decode() if proc.stderr else ""
    return proc


def flock_free(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # also releases ours
    return True


@pytest.mark.slow
def test_index_writer_lock_is_an_flock_released_by_death(project: Path, gate: Gate) -> None:
    code, _, err = gate("remember", "Seed memory about the deploy pipeline", "--kind", "decision")
    assert code == 0, err
    paths = ProjectPaths.for_cwd(project)
    lock = Path(paths.index_dir) / ".tantivy-writer.lock"
    holder = hold(HOLD_WRITER, str(project))
    try:
        assert not flock_free(lock)  # an flock conflicts with ours: tantivy's lock is an flock, not a lock file
        with pytest.raises(IndexBusy):
            MemoryIndex(paths)._writer(0.2)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert lock.exists()  # the file stays behind ...
    assert flock_free(lock)  # ... but the kernel dropped the lock with the process
    writer = MemoryIndex(paths)._writer(0.0)  # no wait allowed: a held lock would raise IndexBusy at once
    writer.rollback()
    del writer
    code, out, err = gate("remember", "Written after the holder died", "--kind", "finding", "--json")
    assert code == 0, err
    code, out, _ = gate("reindex", "--check", "--json")
    assert json.loads(out)["consistent"] is True


@pytest.mark.slow
def test_ledger_lock_released_by_death_and_unsaved_state_not_kept(project: Path) -> None:
    holder = hold(HOLD_LEDGER, "dying-session")
    try:
        lock = next(p for p in (Path(os.environ["GATE_HOME"]) / "state" / "sessions").iterdir()
                    if p.suffix == ".lock")
        assert not flock_free(lock)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert flock_free(lock)  # the kernel dropped the lock with the process
    with support.hang_guard("opening the ledger after its holder died"), open_ledger("dying-session") as ledger:
        assert ledger.writeback_blocks == 0  # the dead process's change was never saved
        ledger.writeback_blocks = 1
    stored = read_ledger("dying-session")
    assert stored is not None and stored.writeback_blocks == 1


@pytest.mark.slow
def test_sigkilled_hooks_leave_whole_audit_lines_and_a_loadable_ledger(project: Path, gate: Gate,
                                                                        tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent / "data"))
    from cli_transcript import fixed_bug_turn

    code, _, err = gate("remember", "Reserve waterfall triggers at 30 days overdue", "--kind", "decision")
    assert code == 0, err
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(fixed_bug_turn(str(project)).text())
    # Kill points: just before each write a hook of each kind makes (its ledger, the audit, the error log, the
    # caches), counted on an uninterrupted run of that kind; the hook stops itself there and is killed.
    under = [os.environ["GATE_HOME"], str(project)]
    site = tmp_path / "stop-at-write"
    command = [sys.executable, "-m", "gate.hook"]
    names = ("Stop", "UserPromptSubmit", "SessionStart", "PreCompact")

    def event_of(name: str, k: int) -> bytes:
        return json.dumps({"session_id": "killed-hooks", "transcript_path": str(transcript), "cwd": str(project),
                           "hook_event_name": name, "prompt": f"When does the reserve waterfall trigger {k}?",
                           "stop_hook_active": False, "source": "startup"}).encode()

    writes = {name: support.writes_of_a_run(command, site, under, event_of(name, 0)) for name in names}
    kills = 0
    for k in range(HOOK_KILLS):
        name = names[k % len(names)]
        runs = -(-HOOK_KILLS // len(names))  # of this kind: spread from its first write to its last
        point = round((k // len(names)) * (writes[name] - 1) / max(runs - 1, 1))
        kills += support.kill_at_write(command, site, under, point, event_of(name, k + 1)) is None
    assert kills >= HOOK_KILLS // 2, (kills, writes)
    audit = Path(audit_log_file())
    lines = audit.read_text(encoding="utf-8").splitlines() if audit.exists() else []
    assert all(isinstance(json.loads(line), dict) for line in lines)
    assert read_ledger("killed-hooks") is not None or not lines  # loadable whenever a hook got that far
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], capture_output=True, timeout=60, input=json.dumps(
        {"session_id": "killed-hooks", "transcript_path": str(transcript), "cwd": str(project),
         "hook_event_name": "Stop", "stop_hook_active": False}).encode())
    assert proc.returncode == 0
    last = json.loads(audit.read_text(encoding="utf-8").splitlines()[-1])
    assert last["reason"] != "FAILED_OPEN", last
    report({"hook_kills": kills, "hook_writes_of_a_run": writes, "audit_lines_after_kills": len(lines)})
