"""Concurrency: writers and hooks on one store at once, and hooks of one session racing each other.

- 8 processes write memories (`gate remember`, the whole command, back to back) while 8 others run recall,
  Stop and SessionStart hooks against the same store until the writers are done: afterwards every memory
  written is in the files and found by search, no hook failed open, and `gate reindex --check --json`
  reports the index consistent.
- Many Stop hooks of ONE session race: the ledger's flock over load-modify-save keeps the write-back cap
  (total blocks == cap, never more); different sessions racing keep a cap each; audit lines never interleave.

Every run is a fixed amount of work, never a time window (what a loaded machine gets done in N seconds is
no property of the code); generous timeouts only turn a hang into a failure. Sizes from the environment for
longer local runs: GATE_CONCURRENCY_WRITES (memories per writer, default 4), GATE_CONCURRENCY_WRITERS /
GATE_CONCURRENCY_READERS (8 / 8), GATE_RACE_PROCESSES (8), GATE_RACE_STOPS (6 per process),
GATE_REINDEX_RUNS (5). With GATE_HARDENING_REPORT=FILE the figures are appended to FILE as JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import support

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import fixed_bug_turn

from gate.paths import ProjectPaths, audit_log_file, error_log_file
from gate.session.ledger import read_ledger

WRITES = int(os.environ.get("GATE_CONCURRENCY_WRITES", "4"))
MIN_HOOKS = 4  # per reader, however quickly the writers finish: readers keep going until they have
WRITERS = int(os.environ.get("GATE_CONCURRENCY_WRITERS", "8"))
READERS = int(os.environ.get("GATE_CONCURRENCY_READERS", "8"))
RACE_PROCESSES = int(os.environ.get("GATE_RACE_PROCESSES", "8"))
RACE_STOPS = int(os.environ.get("GATE_RACE_STOPS", "6"))
CAP = 5

Gate = Callable[..., tuple[int, str, str]]


def report(figures: dict[str, Any]) -> None:
    support.report("concurrency", figures)


# One script for every worker process: `python -c WORKER ROLE JSON-ARGS`. Hooks run in-process through
# gate.hook.main (stdin/stdout swapped) so a worker evaluates many events; every few events one runs in a
# real `python -m gate.hook` process instead, as Claude Code starts them. A writer writes its share and
# leaves a file in args["done"]; a reader runs hooks until every writer has, and at least args["min_hooks"].
WORKER = r'''
import io, json, os, subprocess, sys, time
role, args = sys.argv[1], json.loads(sys.argv[2])
out = open(args["out"], "a", encoding="utf-8")

def emit(**record):
    out.write(json.dumps(record) + "\n")
    out.flush()

def hook_in_process(event):
    import gate.hook
    buffer = io.BytesIO()
    stdout = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8")
    sys.stdout = stdout
    try:
        code = gate.hook.main()
    finally:
        sys.stdin, sys.stdout = saved
    return code, buffer.getvalue().decode()

def hook_process(event):
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode()

print("ready", flush=True)  # imported: wait with the others for the go (tests/support.py start_together)
sys.stdin.readline()

if role == "writer":
    from contextlib import redirect_stderr, redirect_stdout
    from gate.cli import main as gate_main
    for n in range(args["writes"]):
        token = f"w{args['worker']}n{n}probe"
        title = f"Concurrency {token} reserve waterfall ledger rounding"
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = gate_main(["remember", title, "--body", f"body of {token} " + "detail " * 20,
                              "--kind", "finding", "--tag", token, "--project", args["project"], "--json"])
        memory_id = json.loads(stdout.getvalue())["id"] if code == 0 else None
        emit(role=role, token=token, title=title, id=memory_id, code=code, err=stderr.getvalue()[-300:])
    open(os.path.join(args["done"], f"writer-{args['worker']}"), "w").close()
else:
    n = 0
    while True:
        if role == "racer" and n >= args["stops"]:
            break
        if role == "reader" and n >= args["min_hooks"] and len(os.listdir(args["done"])) >= args["writers"]:
            break
        if role == "racer":
            event = {"session_id": args["session"], "transcript_path": args["transcript"], "cwd": args["project"],
                     "hook_event_name": "Stop", "stop_hook_active": False}
        else:
            kind = ("UserPromptSubmit", "Stop", "UserPromptSubmit", "SessionStart")[n % 4]
            event = {"session_id": f"r{args['worker']}-{n // 8}", "transcript_path": args["transcript"],
                     "cwd": args["project"], "hook_event_name": kind, "source": "startup",
                     "stop_hook_active": False, "prompt": "When does the reserve waterfall ledger rounding apply?"}
            if kind == "UserPromptSubmit":
                event["session_id"] = f"r{args['worker']}-p{n}"  # a new session: the first prompt always searches
        runner = hook_process if n % args["process_every"] == args["process_every"] - 1 else hook_in_process
        started = time.time()
        code, text = runner(event)
        emit(role=role, event=event["hook_event_name"], code=code, out=text, seconds=time.time() - started,
             process=runner is hook_process)
        n += 1
'''


def start_workers(role: str, count: int, common: dict[str, Any], tmp: Path) -> list[tuple[subprocess.Popen, Path]]:
    procs = []
    for worker in range(count):
        out = tmp / f"{role}-{worker}.jsonl"
        args = {**common, "worker": worker, "out": str(out)}
        proc = subprocess.Popen([sys.executable, "-c", WORKER, role, json.dumps(args)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append((proc, out))
    return procs


def collect(procs: list[tuple[subprocess.Popen, Path]], timeout: float) -> list[dict[str, Any]]:
    records = []
    for proc, out in procs:
        _, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err.decode()[-2000:]
        records += [json.loads(line) for line in out.read_text().splitlines()]
    return records


@contextmanager
def stopped_at_the_end(procs: list[tuple[subprocess.Popen, Path]]) -> Iterator[None]:
    """Kill whatever worker is still running when the block ends (a failed one leaves the others waiting)."""
    try:
        yield
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def fix_transcript(path: Path) -> Path:
    path.write_text(fixed_bug_turn(str(path.parent)).text())
    return path


def audit_lines() -> list[str]:
    path = Path(audit_log_file())
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def check_answer(event_name: str, text: str) -> None:
    if not text:
        return
    data = json.loads(text)
    if event_name == "Stop":
        assert support.stop_verdict(data) is not None
    else:
        assert set(data) == {"hookSpecificOutput"}
        assert data["hookSpecificOutput"]["hookEventName"] == event_name


# --- writers and hooks on one store ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_writers_and_hooks_on_one_store(project: Path, gate: Gate, tmp_path: Path) -> None:
    code, out, err = gate("remember", "Reserve waterfall triggers at 30 days overdue", "--kind", "decision")
    assert code == 0, err
    code, out, err = gate("remember", "Never push to main directly", "--kind", "directive")
    assert code == 0, err
    done = tmp_path / "writers-done"
    done.mkdir()
    common = {"project": str(project), "writes": WRITES, "writers": WRITERS, "done": str(done),
              "min_hooks": MIN_HOOKS, "transcript": str(fix_transcript(tmp_path / "turn.jsonl")), "process_every": 5}
    writers = start_workers("writer", WRITERS, common, tmp_path)
    readers = start_workers("reader", READERS, common, tmp_path)
    with stopped_at_the_end(writers + readers):
        support.start_together([proc for proc, _ in writers + readers])  # every one imported: they begin together
        written = collect(writers, timeout=600)  # the timeouts only guard against a hang
        hooks = collect(readers, timeout=600)

    failed_writes = [w for w in written if w["code"] != 0]
    assert not failed_writes, failed_writes[:5]
    assert len(written) == WRITERS * WRITES  # every writer did all its work
    assert len(hooks) >= READERS * MIN_HOOKS
    for record in hooks:
        assert record["code"] == 0
        check_answer(record["event"], record["out"])

    # every memory written is in the files, whole
    from gate.memory.store.store import Store

    store = Store(ProjectPaths.for_cwd(project))
    on_disk = {m.id: m for m in store.memories()}
    assert not store.corrupt()
    for w in written:
        assert w["id"] in on_disk, w
        assert on_disk[w["id"]].title == w["title"]
        assert on_disk[w["id"]].tags == [w["token"]]

    # the index is level with the files as the writers left it (nothing has caught it up since)
    code, out, err = gate("reindex", "--check", "--json")
    assert code == 0, out + err
    assert json.loads(out)["consistent"] is True

    # ... and search finds every one of them by its own token
    missing = []
    for w in written:
        code, out, err = gate("search", w["token"], "--json", "--limit", "3")
        assert code == 0, err
        if w["id"] not in [hit["id"] for hit in json.loads(out)["hits"]]:
            missing.append(w["token"])
    assert not missing, missing

    # no hook failed, and the audit holds one whole JSON line per evaluation
    lines = audit_lines()
    records = [json.loads(line) for line in lines]
    assert not [r for r in records if r["reason"] == "FAILED_OPEN"], Path(error_log_file()).read_text()[-2000:]
    assert not Path(error_log_file()).exists() or not Path(error_log_file()).read_text().strip()
    assert len(records) == len(hooks)
    reasons = Counter(r["reason"] for r in records)
    report({
        "writers": WRITERS, "readers": READERS, "memories_written": len(written),
        "hook_runs": len(hooks), "hook_processes": sum(r["process"] for r in hooks),
        "recall_fired": reasons["FIRED_SESSION_START"] + reasons["FIRED_TOPIC_SHIFT"],
        "stop_blocked": reasons["BLOCKED_WRITEBACK"], "slowest_hook_s": round(max(r["seconds"] for r in hooks), 2),
        "lost": 0,
    })


# --- racing Stop hooks: the write-back cap -------------------------------------------------------------------------
def race(project: Path, tmp_path: Path, sessions: list[str], processes: int, stops: int) -> list[dict[str, Any]]:
    support.without_fix_guard(project)  # one fix turn again and again: the race is about the cap
    transcript = fix_transcript(tmp_path / "race.jsonl")
    procs = []
    for worker in range(processes):
        out = tmp_path / f"racer-{worker}.jsonl"
        args = {"project": str(project), "transcript": str(transcript),
                "session": sessions[worker % len(sessions)], "stops": stops, "worker": worker, "out": str(out),
                "process_every": 3}
        procs.append((subprocess.Popen([sys.executable, "-c", WORKER, "racer", json.dumps(args)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE), out))
    with stopped_at_the_end(procs):
        support.start_together([proc for proc, _ in procs])
        return collect(procs, timeout=240)


@pytest.mark.slow
def test_racing_stop_hooks_of_one_session_keep_the_cap(project: Path, tmp_path: Path) -> None:
    results = race(project, tmp_path, ["race-one"], RACE_PROCESSES, RACE_STOPS)
    assert len(results) == RACE_PROCESSES * RACE_STOPS
    assert all(r["code"] == 0 for r in results)
    blocks = [r for r in results if r["out"]]
    for r in blocks:
        check_answer("Stop", r["out"])
    assert len(blocks) == CAP  # never more than the cap, and the cap is reached: no update was lost
    ledger = read_ledger("race-one")
    assert ledger is not None and ledger.writeback_blocks == CAP
    assert len(ledger.writeback_outcomes) == CAP  # each block's outcome settled exactly once (as ignored)
    records = [json.loads(line) for line in audit_lines()]  # every line whole
    reasons = Counter(r["reason"] for r in records)
    assert len(records) == len(results)
    assert reasons["BLOCKED_WRITEBACK"] == CAP
    assert reasons["ALLOW_CAPPED"] == len(results) - CAP
    report({"race_one_session_stops": len(results), "race_processes": RACE_PROCESSES, "blocks": len(blocks),
            "cap": CAP, "real_processes": sum(r["process"] for r in results)})


@pytest.mark.slow
def test_racing_stop_hooks_of_many_sessions_keep_a_cap_each(project: Path, tmp_path: Path) -> None:
    sessions = ["race-a", "race-b", "race-c", "race-d"]
    results = race(project, tmp_path, sessions, RACE_PROCESSES, RACE_STOPS + 2)
    records = [json.loads(line) for line in audit_lines()]
    assert len(records) == len(results)
    for session in sessions:
        blocked = [r for r in records if r["session"] == session and r["reason"] == "BLOCKED_WRITEBACK"]
        ledger = read_ledger(session)
        assert ledger is not None
        assert len(blocked) == ledger.writeback_blocks == CAP, session
    report({"race_many_sessions_stops": len(results), "sessions": len(sessions)})


@pytest.mark.slow
def test_simultaneous_real_hook_processes_of_one_session(project: Path, tmp_path: Path) -> None:
    """As Claude Code would start them: fresh `python -m gate.hook` processes, all at once."""
    support.without_fix_guard(project)  # one fix turn again and again: the race is about the cap
    transcript = fix_transcript(tmp_path / "t.jsonl")
    event = json.dumps({"session_id": "burst", "transcript_path": str(transcript), "cwd": str(project),
                        "hook_event_name": "Stop", "stop_hook_active": False}).encode()
    blocks = 0
    runs = 0
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "gate.hook"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                 for _ in range(8)]
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(event)
            proc.stdin.close()
        for proc in procs:
            assert proc.stdout is not None
            out = proc.stdout.read().decode()
            assert proc.wait(timeout=120) == 0
            if out:
                check_answer("Stop", out)
                blocks += 1
            runs += 1
    assert blocks == CAP
    records = [json.loads(line) for line in audit_lines()]
    assert len(records) == runs and not [r for r in records if r["reason"] == "FAILED_OPEN"]


# --- writers racing for one id ------------------------------------------------------------------------------------
SAME_ID = r'''
import io, sys, time
from contextlib import redirect_stderr, redirect_stdout
from gate.cli import main
import gate.commands.remember, gate.memory.store.store  # imported before the go
writer, memory_id, project = sys.argv[1], sys.argv[2], sys.argv[3]
print("ready", flush=True)  # imported: wait with the others for the go (tests/support.py start_together)
sys.stdin.readline()
with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
    # the round in the title too: an earlier round's winner with the same title would be a near-duplicate
    code = main(["remember", f"Written by writer {writer} for {memory_id}", "--id", memory_id, "--project", project])
print(code)
'''


@pytest.mark.slow
def test_writers_racing_for_one_id_never_lose_a_memory_silently(project: Path, gate: Gate) -> None:
    """`gate remember --id X` from several processes at once: exactly one succeeds and its memory is the one
    on disk; the others are refused. (Before: several printed the id and exited 0, and all but one memory
    were silently overwritten.)"""
    code, _, err = gate("remember", "A seed memory", "--kind", "finding")
    assert code == 0, err
    rounds = int(os.environ.get("GATE_SAME_ID_ROUNDS", "4"))
    from gate.memory.store.store import Store

    store = Store(ProjectPaths.for_cwd(project))
    for n in range(rounds):
        procs = [subprocess.Popen([sys.executable, "-c", SAME_ID, str(w), f"same-{n}", str(project)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE) for w in range(6)]
        support.start_together(procs)
        codes = [int(proc.communicate(timeout=120)[0].split()[-1]) for proc in procs]
        winners = [w for w, c in enumerate(codes) if c == 0]
        assert len(winners) == 1, codes
        assert set(codes) <= {0, 2}  # the others: "exists already"
        assert store.get(f"same-{n}").title == f"Written by writer {winners[0]} for same-{n}"
    report({"same_id_rounds": rounds, "writers_per_round": 6})


# --- audit rotation under racing writers ----------------------------------------------------------------------------
ROTATE = r'''
import sys, time
from gate.session.audit import write_audit
writer, count, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("ready", flush=True)  # imported: wait with the others for the go (tests/support.py start_together)
sys.stdin.readline()
for n in range(count):
    write_audit({"session": f"w{writer}", "event": "Stop", "reason": "X", "n": n, "pad": "x" * 100}, limit)
'''


@pytest.mark.slow
def test_audit_rotation_under_racing_writers_keeps_a_whole_generation(project: Path) -> None:
    """Past its size limit the audit rotates to audit.jsonl.1. Two writers finding it full at once both
    renamed: the second moved the fresh, nearly empty file over .1 and a whole generation was lost."""
    from gate.paths import audit_log_file

    limit = 20_000
    rounds = int(os.environ.get("GATE_ROTATION_ROUNDS", "4"))
    for n in range(rounds):
        for path in (Path(audit_log_file()), Path(audit_log_file()).with_name("audit.jsonl.1")):
            path.unlink(missing_ok=True)
        procs = [subprocess.Popen([sys.executable, "-c", ROTATE, str(w), "2000", str(limit)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE) for w in range(8)]
        support.start_together(procs)
        for proc in procs:
            proc.communicate(timeout=240)
            assert proc.returncode == 0
        rotated = Path(audit_log_file()).with_name("audit.jsonl.1")
        for path in (Path(audit_log_file()), rotated):
            assert all(isinstance(json.loads(line), dict) for line in path.read_text().splitlines())
        assert rotated.stat().st_size > limit, f"round {n}: the rotated generation holds {rotated.stat().st_size} B"
    report({"rotation_rounds": rounds, "rotation_writers": 8, "lines_per_writer": 2000})


# --- gate reindex while the store is in use -------------------------------------------------------------------------
REINDEX_WORKER = r'''
import io, json, os, sys, time
from contextlib import redirect_stderr, redirect_stdout
from gate.cli import main
import gate.hook, gate.commands.reindex, gate.commands.remember
role, project, worker, out, meeting, runs, least, others = sys.argv[1:9]
runs, least, others = int(runs), int(least), int(others)
results = open(out, "a", encoding="utf-8")
print("ready", flush=True)  # imported: wait with the others for the go (tests/support.py start_together)
sys.stdin.readline()
n = 0
while True:
    # the reindexer goes on until it has run `runs` times and every other worker has done its least share;
    # the others go on until the reindexer is done: all of that share ran while reindexes did
    if role == "reindex":
        if n >= runs and len([f for f in os.listdir(meeting) if f.startswith("least-")]) >= others:
            break
    else:
        if n == least:
            open(os.path.join(meeting, f"least-{worker}"), "w").close()
        if n >= least and os.path.exists(os.path.join(meeting, "reindex-done")):
            break
    if role == "hook":
        event = {"session_id": f"h{worker}-{n}", "cwd": project, "hook_event_name": "UserPromptSubmit",
                 "prompt": "When does the reserve waterfall probe trigger?"}
        sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8")
        saved, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        try:
            gate.hook.main()
        finally:
            sys.stdout = saved
        code = 0
    else:
        args = ["reindex"] if role == "reindex" else ["remember", f"w{worker} n{n} reserve waterfall probe"]
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            try:
                code = main([*args, "--project", project])
            except Exception as error:
                code = repr(error)
    results.write(json.dumps({"role": role, "worker": worker, "code": code}) + "\n")
    results.flush()
    n += 1
if role == "reindex":
    open(os.path.join(meeting, "reindex-done"), "w").close()
'''


@pytest.mark.slow
def test_reindex_while_writers_and_hooks_run(project: Path, gate: Gate, tmp_path: Path) -> None:
    """`gate reindex` wiped the index directory and built it again: writers running meanwhile failed on a
    missing meta.json, hooks failed open or found no index and skipped recall."""
    for n in range(10):
        code, _, err = gate("remember", f"Seed {n} about the reserve waterfall probe", "--kind", "finding")
        assert code == 0, err
    reindex_runs = int(os.environ.get("GATE_REINDEX_RUNS", "5"))
    least = 2  # writes or hooks per worker, all while the reindexer runs
    out = tmp_path / "results.jsonl"
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    roles = ["reindex", "writer", "writer", "hook", "hook", "hook"]
    procs = [(subprocess.Popen([sys.executable, "-c", REINDEX_WORKER, role, str(project), str(n),
                                str(out), str(meeting), str(reindex_runs), str(least), str(len(roles) - 1)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE), out)
             for n, role in enumerate(roles)]
    with stopped_at_the_end(procs):
        support.start_together([proc for proc, _ in procs])
        for proc, _ in procs:
            proc.communicate(timeout=600)  # the timeout only guards against a hang
            assert proc.returncode == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [r for r in results if r["code"] != 0]
    assert not failed, failed[:5]
    runs = Counter(r["role"] for r in results)
    assert runs["reindex"] >= reindex_runs
    per_worker = Counter(r["worker"] for r in results)
    assert all(per_worker[str(n)] >= least for n in range(1, len(roles))), per_worker
    reasons = Counter(json.loads(line)["reason"] for line in audit_lines())
    assert reasons["FAILED_OPEN"] == 0 and reasons["SKIP_NO_INDEX"] == 0, reasons
    code, out_text, _ = gate("reindex", "--check", "--json")
    assert json.loads(out_text)["consistent"] is True
    report({"reindex_runs": runs["reindex"], "writes_during_reindex": runs["writer"], "hooks_during_reindex":
            runs["hook"]})
