"""Whole-process measurement: wall time, CPU time and peak RSS of one child process, interleaved over candidates.

A hook's cost to the user is the whole process (interpreter start, imports, work, exit), so each run is a fresh
subprocess timed from spawn to reap. Candidates of a group run in a shuffled order each round, so drifts in
machine load (other engineers' tests on 2 shared cores) land on all of them alike and ratios within a group
stay meaningful.

CPU time (user + system, from the child's own rusage at wait4) is reported beside wall time: on 2 shared cores
wall time includes waiting for a core, CPU time does not, so it is the steadier of the two under load.

Peak RSS is measured in separate, untimed runs through scripts/rss_shim.py: a child's ru_maxrss includes the
address space it had before exec(), which for a child spawned by this (large) process is this process's. The
shim forks the command from a small interpreter and reports the command's own ru_maxrss from wait4().
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

Stdin = bytes | Callable[[int], bytes] | None
Argv = list[str] | Callable[[int], list[str]]
# A check sees (returncode, stdout, stderr) and returns None when the run did what the row claims.
Check = Callable[[int, bytes, bytes], str | None]


@dataclass
class Candidate:
    """One row of the table: a command, its stdin per run, and what its output must look like."""

    name: str
    argv: Argv
    stdin: Stdin = None
    env: dict[str, str] | None = None
    cwd: Path | None = None
    prepare: Callable[[int], None] | None = None  # untimed, before each timed run (e.g. an earlier prompt)
    check: Check | None = None
    max_seconds: float | None = None  # stop sampling a slow candidate once it used this much wall time
    note: str = ""

    def argv_for(self, index: int) -> list[str]:
        return self.argv(index) if callable(self.argv) else self.argv

    def stdin_for(self, index: int) -> bytes | None:
        return self.stdin(index) if callable(self.stdin) else self.stdin


@dataclass
class Run:
    wall_s: float
    cpu_s: float  # user + system time of the child (and of any children it reaped)
    rss_kb: int
    returncode: int
    stdout: bytes
    stderr: bytes


@dataclass
class Result:
    name: str
    samples_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    failures: int = 0
    first_failure: str = ""
    note: str = ""
    skipped: str = ""  # why the row has no numbers (e.g. gate's hook is not installed yet)

    @property
    def n(self) -> int:
        return len(self.samples_ms)

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None

    @property
    def median_cpu_ms(self) -> float | None:
        return statistics.median(self.cpu_ms) if self.cpu_ms else None

    @property
    def p95_ms(self) -> float | None:
        return percentile(self.samples_ms, 95) if self.samples_ms else None

    @property
    def peak_rss_mb(self) -> float | None:
        return max(self.rss_kb) / 1024 if self.rss_kb else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n": self.n,
            "median_ms": self.median_ms,
            "p95_ms": self.p95_ms,
            "min_ms": min(self.samples_ms) if self.samples_ms else None,
            "median_cpu_ms": self.median_cpu_ms,
            "peak_rss_mb": self.peak_rss_mb,
            "failures": self.failures,
            "first_failure": self.first_failure,
            "note": self.note,
            "skipped": self.skipped,
            "samples_ms": [round(s, 3) for s in self.samples_ms],
            "cpu_ms": [round(s, 3) for s in self.cpu_ms],
        }


def percentile(values: list[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), exact for small samples too."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * pct / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def become_subreaper() -> bool:
    """Adopt the processes our children leave behind (Linux PR_SET_CHILD_SUBREAPER), so that a hook's detached
    background work (an index or cue-table rebuild, say) can be waited for instead of running, unseen, on the
    same two cores as the next timed run."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(36, 1, 0, 0, 0)) == 0  # 36 = PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def settle(timeout: float = 300.0) -> tuple[int, float]:
    """Reap every adopted background process, waiting for those still running. Returns (count, seconds).

    Only called between runs: no child of ours is running then, so whatever waitpid(-1) returns was adopted.
    """
    start = time.perf_counter()
    reaped = 0
    while time.perf_counter() - start < timeout:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.05)
            continue
        reaped += 1
    return reaped, time.perf_counter() - start


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


RSS_SHIM = Path(__file__).resolve().parent / "scripts" / "rss_shim.py"


def peak_rss_kb(argv: list[str], stdin: bytes | None, env: dict[str, str] | None, cwd: Path | None, python: str) -> int:
    """The command's own peak RSS in KB (Linux ru_maxrss units), measured through the shim."""
    with tempfile.TemporaryDirectory(prefix="gate-bench-rss-") as tmp:
        out = Path(tmp) / "rss"
        run_once([python, "-S", str(RSS_SHIM), str(out), *argv], stdin, env, cwd)
        return int(out.read_text() or 0)


def run_once(
    argv: list[str],
    stdin: bytes | None,
    env: dict[str, str] | None,
    cwd: Path | None,
    timeout: float = 120.0,
) -> Run:
    """Spawn, feed stdin, read stdout to EOF, reap with wait4: wall time from spawn to reap, the child's CPU time
    and RSS.

    stdin must fit the pipe buffer (hook events do) because it is written before stdout is read; stderr goes
    to a temporary file so a chatty child can never block on a full pipe.
    """
    if stdin is not None and len(stdin) > 60_000:
        raise ValueError("stdin larger than a pipe buffer; the harness writes it before reading stdout")
    with tempfile.TemporaryFile() as err:
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        proc: subprocess.Popen[bytes] | None = None
        try:
            start = time.perf_counter()
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=cwd,
            )
            if stdin is not None and proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.write(stdin)
                with contextlib.suppress(BrokenPipeError):
                    proc.stdin.close()
            assert proc.stdout is not None
            out = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting again
            proc.stdout.close()
        except _Timeout:
            if proc is not None:
                proc.kill()
                proc.wait()
            raise TimeoutError(f"{argv[:3]} ran longer than {timeout:.0f} s") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        err.seek(0)
        return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode, out, err.read())


def measure_group(
    candidates: list[Candidate],
    runs: int,
    warmup: int = 2,
    seed: int = 1,
    min_runs: int = 5,
    progress: Callable[[str], None] | None = None,
    rss_runs: int = 2,
    python: str = sys.executable,
    notes: list[str] | None = None,
) -> dict[str, Result]:
    """Interleave the candidates for `runs` rounds (shuffled order per round) after `warmup` untimed rounds,
    then `rss_runs` untimed rounds through the RSS shim.

    Warm-up fills the page cache and writes bytecode, as the thousandth prompt of a day would find them;
    background processes the warm-up left are waited for (and counted in `notes`) before timing starts.
    A candidate with max_seconds stops after it has spent that long, once it has `min_runs` samples.
    """
    rng = random.Random(seed)
    results = {c.name: Result(c.name, note=c.note) for c in candidates}
    spent = dict.fromkeys(results, 0.0)
    for round_index in range(-warmup, runs):
        if round_index == 0:
            count, seconds = settle()
            if count and notes is not None:
                notes.append(f"warm-up left {count} background process(es); waited {seconds:.1f} s for them")
        order = list(candidates)
        rng.shuffle(order)
        for cand in order:
            result = results[cand.name]
            capped = cand.max_seconds is not None and spent[cand.name] >= cand.max_seconds
            if round_index >= 0 and capped and result.n >= min_runs:
                continue
            index = round_index + warmup  # distinct per run, warm-up included (fresh sessions, titles)
            if cand.prepare is not None:
                cand.prepare(index)
            run = run_once(cand.argv_for(index), cand.stdin_for(index), cand.env, cand.cwd)
            if round_index < 0:
                continue
            spent[cand.name] += run.wall_s
            result.samples_ms.append(run.wall_s * 1000)
            result.cpu_ms.append(run.cpu_s * 1000)
            problem = cand.check(run.returncode, run.stdout, run.stderr) if cand.check else None
            if problem is None and run.returncode != 0 and cand.check is None:
                problem = f"exit {run.returncode}: {run.stderr.decode(errors='replace')[-300:]}"
            if problem is not None:
                result.failures += 1
                result.first_failure = result.first_failure or problem
        if progress is not None and round_index >= 0 and (round_index + 1) % max(1, runs // 5) == 0:
            progress(f"  round {round_index + 1}/{runs}")
    for extra in range(rss_runs):
        for cand in candidates:
            index = warmup + runs + extra
            if cand.prepare is not None:
                cand.prepare(index)
            rss = peak_rss_kb(cand.argv_for(index), cand.stdin_for(index), cand.env, cand.cwd, python)
            results[cand.name].rss_kb.append(rss)
    count, seconds = settle()
    if count and notes is not None:
        notes.append(f"timed runs left {count} background process(es); waited {seconds:.1f} s for them")
    return results
