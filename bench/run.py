"""`python -m bench`: gate's hooks and commands, whole-process, against a stdlib floor and against peers.

Sections (each one interleaved group, each with its own floor so every ratio is measured in one run):
  recall at each store size   floor; gate's recall hook on a no-shift and on a shift prompt; `gate search`;
                              peers doing the same search job: sqlite FTS5 bm25 hook, markdown-scan hook, grep
  Stop hook                   floor; gate's Stop hook on an evidence turn at each transcript size
  writes                      floor; N successive `gate remember`
  reads after the writes      the shift hook and `gate search` on a copy of the store without the N writes
                              (before) and on the store with them (after), interleaved
  subagents                   floor; the shift hook; the PreToolUse hook on a spawn (bench/spawn.py) and on tool
                              calls that are no spawn, of the main conversation and of a subagent; SubagentStop
                              (`--only subagents`: this section alone, at the smallest store size)
  search first                floor; the PreToolUse hook on an edit it refuses and a read-only Bash command it lets
                              pass while the turn owes the agent's search (bench/search_first.py), beside the same
                              calls in a turn that owes none (`--only search_first`, at the smallest store size)
  agents                      floor; for Claude Code, Codex CLI and Gemini CLI side by side (bench/agents.py): the
                              recall hook on a shift prompt, the Stop hook on an evidence turn (a JSONL transcript;
                              the same turn as a Codex rollout, bench/rollout.py, and as a Gemini chat recording,
                              bench/gemini_chat.py) and the refusal of the turn's first edit (Edit; apply_patch;
                              replace) while the search is owed (`--only agents`, at the smallest store size and
                              transcript size)
Everything runs under a fresh temporary GATE_HOME; nothing touches the user's memories.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import agents, prompts
from bench.corpus import Generator, build_fts5, write_jsonl, write_markdown_dir
from bench.gemini_chat import write_chat
from bench.measure import Candidate, Check, Result, become_subreaper, measure_group, run_once, settle
from bench.report import Section, Target, render_markdown, to_json
from bench.rollout import write_rollout
from bench.scripts._terms import terms
from bench.search_first import BASH_ANCHORS, BASH_OWED, EDIT_ANCHORS, EDIT_REFUSED, search_first_section
from bench.spawn import SPAWN, SUB_TOOL, TOOL, spawn_section
from bench.transcript import Transcript, format_size, parse_size, write_transcript

SCRIPTS = Path(__file__).resolve().parent / "scripts"
RESULTS = Path(__file__).resolve().parent / "results"

FLOOR = "floor: stdlib hook (read stdin, print JSON)"
NOSHIFT = "gate recall hook, no-shift prompt"
SHIFT = "gate recall hook, shift prompt (hits)"
SEARCH = "gate search"
START = "gate session-start hook (standing memories + index)"
PEER_FTS5 = "peer: sqlite FTS5 bm25 hook"
PEER_SCAN = "peer: markdown-scan hook (python)"
PEER_GREP = "peer: grep -rilF over markdown files"
REMEMBER = "gate remember"


def stop_row(size: int) -> str:
    return f"gate Stop hook, {format_size(size)} transcript"


@dataclass
class Options:
    sizes: list[int]
    runs: int
    warmup: int
    transcripts: list[int]
    remembers: int
    remember_size: int
    slow_cap_s: float
    python: str
    out: Path
    gate_src: str | None
    before_src: str | None
    json: bool
    keep: bool
    seed: int
    quick: bool
    only: str | None = None
    ledgers: int = 5000


@dataclass
class Gate:
    """How to run gate, or why it cannot run (then its rows are listed as skipped)."""

    python: str
    cli: list[str]
    src: Path | None = None  # a source snapshot put first on PYTHONPATH (else the installed gate)
    missing: str = ""
    location: str = ""  # where `import gate` resolved, for the report
    commit: str = ""
    # The hook's argv as this gate's own launcher runs it (asked of the gate under test, see hook_argv_of);
    # the `-P` form of gates from before gate/install/launcher.py's hook_argv, which find a snapshot through
    # PYTHONPATH.
    hook: list[str] = field(default_factory=list)
    before: Gate | None = None  # --before: other code whose hooks run beside these, in the same rounds

    def env(self, home: Path, project: Path) -> dict[str, str]:
        """The child environment: a temp GATE_HOME, no other GATE_* (GATE_WRITEBACK unset, so Stop evaluates),
        and none of the interpreter switches that distort a timing (import profiling, tracemalloc, dev mode)."""
        distorting = {"PYTHONPROFILEIMPORTTIME", "PYTHONTRACEMALLOC", "PYTHONDEVMODE", "PYTHONDONTWRITEBYTECODE"}
        env = {k: v for k, v in os.environ.items() if not k.startswith("GATE_") and k not in distorting}
        env["GATE_HOME"] = str(home)
        env["CLAUDE_PROJECT_DIR"] = str(project)
        if self.src is not None:
            env["PYTHONPATH"] = str(self.src)
        return env


@dataclass
class Store:
    size: int
    dir: Path
    memories: list[dict[str, Any]]
    jsonl: Path
    markdown: Path
    fts5: Path
    project: Path
    home: Path
    setup: list[str] = field(default_factory=list)
    before_home: Path | None = None  # the same memories imported by the --before code, for its rows


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1-minute smoke run: one small store, few runs")
    parser.add_argument("--sizes", help="store sizes, comma-separated (default 1000,10000,100000; quick 1000)")
    parser.add_argument("--runs", type=int, help="timed runs per candidate (default 20; quick 5)")
    parser.add_argument("--warmup", type=int, help="untimed rounds before timing (default 2; quick 1)")
    parser.add_argument("--transcripts", help="Stop-hook transcript sizes (default 50KB,5MB,50MB; quick 50KB,5MB)")
    parser.add_argument("--remembers", type=int,
                        help="successive `gate remember` calls (default 150; quick 20; 0: no write section)")
    parser.add_argument("--remember-size", type=int, help="store size for the write/read test (default 10000)")
    parser.add_argument("--slow-cap", type=float, help="seconds after which a slow candidate stops sampling")
    parser.add_argument("--python", default=sys.executable, help="interpreter for hooks (default: this one)")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.md", help="markdown results file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the markdown table")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work directory")
    parser.add_argument(
        "--gate-src",
        help="run gate from this source directory (put first on PYTHONPATH), or HEAD for a `git archive` "
        "snapshot of the last commit (default: the installed gate, i.e. the working tree)",
    )
    parser.add_argument("--ledgers", type=int,
                        help="ledgers of past sessions (the last 14 days) in the recall section's home, as a heavy "
                             "user has them (default 5000; quick 100)")
    parser.add_argument(
        "--before",
        help="other gate code to compare with (a source directory, e.g. a `git archive` of main): each gate hook "
        "row gets a twin row, `… [before]`, running that code's hook on the same store in the same rounds",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=["recall", "subagents", "search_first", "agents"],
                        help="run one section alone: recall (the recall and session-start rows, at every store size), "
                             "subagents, search_first or agents (at the smallest store size)")
    args = parser.parse_args(argv)
    quick = args.quick
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([1000] if quick else [1000, 10000, 100000])
    transcripts = (
        [parse_size(s) for s in args.transcripts.split(",")]
        if args.transcripts
        else [parse_size(s) for s in (("50KB", "5MB") if quick else ("50KB", "5MB", "50MB"))]
    )
    remember_size = args.remember_size or min(sizes, key=lambda s: (abs(s - 10000), s))
    return Options(
        sizes=sizes,
        runs=args.runs or (5 if quick else 20),
        warmup=args.warmup if args.warmup is not None else (1 if quick else 2),
        transcripts=transcripts,
        remembers=args.remembers if args.remembers is not None else (20 if quick else 150),
        remember_size=remember_size,
        slow_cap_s=args.slow_cap or (4.0 if quick else 10.0),
        python=args.python,
        out=args.out,
        gate_src=args.gate_src,
        before_src=args.before,
        json=args.json,
        keep=args.keep,
        seed=args.seed,
        quick=quick,
        only=args.only,
        ledgers=args.ledgers if args.ledgers is not None else (100 if quick else 5000),
    )


def snapshot(work: Path) -> tuple[Path, str]:
    """`git archive HEAD` of this checkout into the work directory: the committed gate, untouched by edits
    that other people make to the working tree while a run is in progress."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    dest = work / "gate-src"
    dest.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=repo, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest, commit


def find_gate(python: str, src: Path | None, commit: str = "") -> Gate:
    script = Path(python).parent / "gate"
    cli = [str(script)] if script.exists() else [python, "-m", "gate.cli"]
    gate = Gate(python, cli, src=src, commit=commit)
    with tempfile.TemporaryDirectory(prefix="gate-bench-probe-") as home:
        env = gate.env(Path(home), Path(home))
        probe = subprocess.run(
            [python, "-c", "import gate.hook, os; print(os.path.dirname(gate.__file__))"],
            env=env,
            cwd=home,  # not this checkout: `-c` puts the cwd first on sys.path
            capture_output=True,
            text=True,
            timeout=60,
        )
        if probe.returncode != 0:
            gate.missing = "gate.hook is not importable yet"
            return gate
        gate.location = probe.stdout.strip()
        gate.hook = hook_argv_of(python, env, home)
        probe = subprocess.run([*cli, "import", "--help"], env=env, cwd=home, capture_output=True, timeout=60)
        if probe.returncode != 0:
            gate.missing = "`gate import` is not available yet"
    return gate


PLAIN_HOOK = "from gate.hook import main; main()"  # how gates before `launcher.hook_argv` ran their hooks
HOOK_ARGV_PROBE = (
    "import json, sys; from gate.install.launcher import hook_argv; print(json.dumps(hook_argv(sys.executable)))"
)


def hook_argv_of(python: str, env: dict[str, str], cwd: str) -> list[str]:
    """The hook's argv exactly as the gate under test wires it (its launcher, gate/install/launcher.py), for its
    own import path: a snapshot given with --gate-src is on that path, since `-I` ignores PYTHONPATH."""
    probe = subprocess.run([python, "-c", HOOK_ARGV_PROBE], env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=60)
    if probe.returncode == 0:
        argv = json.loads(probe.stdout)
        if isinstance(argv, list) and argv and all(isinstance(arg, str) for arg in argv):
            return argv
    return [python, "-P", "-c", PLAIN_HOOK]


# --- checks: each row must do what its name says, or the table says it did not -------------------------------
def _json_object(stdout: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def check_context(marker: str) -> Check:
    def check(rc: int, out: bytes, err: bytes) -> str | None:
        if rc != 0:
            return f"exit {rc}: {err.decode(errors='replace')[-200:]}"
        answer = _json_object(out)
        context = ((answer or {}).get("hookSpecificOutput") or {}).get("additionalContext", "")
        if marker not in context:
            return f"no additionalContext with {marker!r}: {out[:200]!r}"
        return None

    return check


def check_silent(rc: int, out: bytes, err: bytes) -> str | None:
    if rc != 0:
        return f"exit {rc}"
    if out.strip() and "additionalContext" in out.decode(errors="replace"):
        return f"injected context on a no-shift prompt: {out[:200]!r}"
    return None


def check_floor(rc: int, out: bytes, err: bytes) -> str | None:
    return None if rc == 0 and _json_object(out) is not None else f"exit {rc}, stdout {out[:100]!r}"


def check_block(rc: int, out: bytes, err: bytes) -> str | None:
    """Claude Code's Stop block as gate answers it: the Stop's additionalContext (gate.hook.claude_code_stop)."""
    answer = _json_object(out) or {}
    specific = answer.get("hookSpecificOutput") if set(answer) == {"hookSpecificOutput"} else None
    context = specific.get("additionalContext") if isinstance(specific, dict) else None
    if rc != 0 or not isinstance(context, str) or not context.startswith("MEMORY CHECK"):
        return f"exit {rc}, no block: {out[:200]!r} {err[-200:]!r}"
    return None


def check_json_key(key: str) -> Check:
    def check(rc: int, out: bytes, err: bytes) -> str | None:
        answer = _json_object(out) or {}
        if rc != 0 or not answer.get(key):
            return f"exit {rc}, no {key!r} in {out[:200]!r} {err.decode(errors='replace')[-200:]}"
        return None

    return check


def check_grep(rc: int, out: bytes, err: bytes) -> str | None:
    return None if rc == 0 and out.strip() else f"exit {rc}, no files listed"


# --- stores ---------------------------------------------------------------------------------------------------
def gate_import(gate: Gate, store: Store, home: Path) -> float:
    """Load the store with `gate import` (the CLI contract); returns seconds."""
    home.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    done = subprocess.run(
        [*gate.cli, "import", str(store.jsonl)],
        env=gate.env(home, store.project),
        cwd=store.project,
        capture_output=True,
        timeout=3600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"gate import failed ({done.returncode}): {done.stderr.decode(errors='replace')[-800:]}")
    seconds = time.perf_counter() - start
    count, waited = settle()  # background work the import started must not run into the first timings
    if count:
        store.setup.append(f"`gate import` left {count} background process(es); waited {waited:.1f} s for them")
    return seconds


def build_store(size: int, opts: Options, work: Path, gate: Gate) -> Store:
    base = work / f"size-{size}"
    base.mkdir(parents=True)
    start = time.perf_counter()
    memories = Generator(size, opts.seed).memories()
    store = Store(
        size=size,
        dir=base,
        memories=memories,
        jsonl=base / "memories.jsonl",
        markdown=base / "markdown",
        fts5=base / "fts5.db",
        project=base / "project",
        home=base / "home",
    )
    store.project.mkdir()
    # Each run of the shift prompt is a new session sending it word for word: to the recall gate that is a
    # program's prompt, not searched (rules/recall.toml [prompt_terms] scripted_after). The bench measures the
    # search, so its project turns that rule off.
    rules = store.project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[prompt_terms]\nscripted_after = 0\n", encoding="utf-8")
    nbytes = write_jsonl(memories, store.jsonl)
    write_markdown_dir(memories, store.markdown)
    build_fts5(memories, store.fts5)
    store.setup.append(
        f"{size:,} memories ({nbytes / 1e6:.1f} MB JSONL) generated with markdown and FTS5 copies "
        f"in {time.perf_counter() - start:.1f} s"
    )
    if not gate.missing:
        seconds = gate_import(gate, store, store.home)
        store.setup.append(f"`gate import` of {size:,} memories: {seconds:.1f} s ({size / seconds:,.0f} memories/s)")
    if gate.before is not None and not gate.before.missing:
        # The [before] rows read an index their own code built (its segments, its manifests), never this one.
        store.before_home = base / "home-before"
        seconds = gate_import(gate.before, store, store.before_home)
        store.setup.append(f"[before] `gate import` of {size:,} memories: {seconds:.1f} s")
    return store


# --- sections ---------------------------------------------------------------------------------------------------
BEFORE = " [before]"
BEFORE_OFFSET = 500_000  # the twins' run indexes: sessions of their own, never one the gate under test ran


def with_before(group: list[Candidate], gate: Gate, store: Store) -> list[Candidate]:
    """The group, plus a twin of each gate hook row when --before names other code: the same events (in
    sessions of its own), the same memories as that code imported them, that code's hook command; measured in
    the same rounds. Rows that set their session up first (the recall prompts) get their twins from
    recall_candidates, run with that code; they are passed over here."""
    before = gate.before
    if before is None or before.missing or store.before_home is None:
        return group
    twins = []
    for cand in group:
        if cand.argv != gate.hook or cand.prepare is not None or cand.name.endswith(BEFORE):
            continue
        env = {k: v for k, v in (cand.env or {}).items() if k != "PYTHONPATH"}
        env["GATE_HOME"] = str(store.before_home)
        if before.src is not None:
            env["PYTHONPATH"] = str(before.src)
        twins.append(Candidate(
            cand.name + BEFORE,
            before.hook,
            stdin=lambda i, c=cand: c.stdin_for(i + BEFORE_OFFSET),
            env=env,
            cwd=cand.cwd,
            check=cand.check,
            note=f"{before.location}: the row above, run by that code on its own import",
        ))
    return group + twins


def recall_twins(opts: Options, gate: Gate, store: Store, transcript: Path, label: str) -> list[Candidate]:
    """The recall prompts' [before] rows: set up and run by the --before code, in its own import's home."""
    if gate.before is None or gate.before.missing or store.before_home is None:
        return []
    twins = list(recall_candidates(opts, gate.before, store, store.before_home, transcript, f"{label}-before"))
    for twin in twins:
        twin.name += BEFORE
    return twins


def ordered_rows(order: list[str], results: dict[str, Result]) -> list[Result]:
    """The rows in this order, each gate row's [before] twin (when measured) right after it."""
    rows = []
    for name in order:
        rows.append(results[name])
        if name + BEFORE in results:
            rows.append(results[name + BEFORE])
    return rows


def floor_candidate(opts: Options, env: dict[str, str], cwd: Path, stdin: bytes) -> Candidate:
    return Candidate(FLOOR, [opts.python, str(SCRIPTS / "floor.py")], stdin=stdin, env=env, cwd=cwd, check=check_floor)


def skipped(names: list[str], reason: str) -> list[Result]:
    return [Result(name, skipped=reason) for name in names]


def recall_candidates(
    opts: Options, gate: Gate, store: Store, home: Path, transcript: Path, label: str
) -> tuple[Candidate, Candidate]:
    """The recall hook on a no-shift prompt (its session already holds the topic) and on a shift prompt."""
    env = gate.env(home, store.project)
    noshift_session = prompts.session_id(f"{label}-noshift")
    # The session's first prompt sets the topic; every timed run is the follow-up on it.
    run_once(
        gate.hook,
        prompts.prompt_event(noshift_session, prompts.NOSHIFT_SETUP, transcript, store.project),
        env,
        store.project,
    )
    noshift = Candidate(
        NOSHIFT,
        gate.hook,
        stdin=prompts.prompt_event(noshift_session, prompts.NOSHIFT, transcript, store.project),
        env=env,
        cwd=store.project,
        check=check_silent,
    )

    def shift_session(index: int) -> str:
        return prompts.session_id(f"{label}-shift", index)

    def prepare_shift(index: int) -> None:
        # A fresh session on another topic first, so the timed prompt is a mid-session shift with hits to
        # deliver (not suppressed as already delivered in an earlier run).
        event = prompts.prompt_event(shift_session(index), prompts.SHIFT_BEFORE, transcript, store.project)
        run_once(gate.hook, event, env, store.project)

    shift = Candidate(
        SHIFT,
        gate.hook,
        stdin=lambda i: prompts.prompt_event(shift_session(i), prompts.SHIFT, transcript, store.project),
        env=env,
        cwd=store.project,
        prepare=prepare_shift,
        check=check_context("MEMORY SEARCH REQUIRED"),
        note="fresh session per run, one untimed prompt on another topic first",
    )
    return noshift, shift


def session_start_candidate(gate: Gate, store: Store, home: Path, label: str) -> Candidate:
    """The SessionStart hook of a new session: standing memories, then the index tier (fresh session per run)."""

    def event(index: int) -> bytes:
        return json.dumps({
            "session_id": prompts.session_id(f"{label}-start", index), "transcript_path": "",
            "cwd": str(store.project), "hook_event_name": "SessionStart", "source": "startup",
        }).encode()

    return Candidate(
        START, gate.hook, stdin=event, env=gate.env(home, store.project), cwd=store.project,
        check=check_context("MEMORY:"), note="fresh session per run",
    )


def search_candidate(gate: Gate, store: Store, home: Path, max_seconds: float, name: str = SEARCH) -> Candidate:
    return Candidate(
        name,
        [*gate.cli, "search", prompts.SEARCH_QUERY, "--json"],
        env=gate.env(home, store.project),
        cwd=store.project,
        check=check_json_key("hits"),
        max_seconds=max_seconds,  # a CLI command, not a hook: fewer samples are enough when it is slow
    )


def seed_ledgers(home: Path, count: int, seed: int) -> str:
    """`count` ledgers of past sessions, last touched at random times in the last 14 days (the default age at
    which they are pruned), beside the ones the benchmark's own sessions write: what a session start finds in a
    heavy or scripted user's state directory."""
    import random

    sessions = home / "state" / "sessions"
    template = next(sessions.glob("*.json"), None)
    if template is None:
        return "no ledger to copy: none seeded"
    body = template.read_bytes()
    rng = random.Random(seed)
    now = time.time()
    for number in range(count):
        path = sessions / f"bench-past-{number:06d}.json"
        path.write_bytes(body)
        (sessions / f"bench-past-{number:06d}.lock").touch()
        when = now - rng.uniform(0, 14 * 86400 - 3600)
        os.utime(path, (when, when))
    return f"{count:,} ledgers of past sessions of the last 14 days in the state directory"


def recall_section(opts: Options, gate: Gate, store: Store, transcript: Path) -> Section:
    env = gate.env(store.home, store.project)
    event = prompts.prompt_event(prompts.session_id("peer"), prompts.SHIFT, transcript, store.project)
    floor = floor_candidate(opts, env, store.project, event)

    def peer_hook(name: str, script: str, data: Path) -> Candidate:
        """A peer hook script: the same event on stdin, the same answer expected."""
        return Candidate(
            name,
            [opts.python, str(SCRIPTS / script), str(data)],
            stdin=event,
            env=env,
            cwd=store.project,
            check=check_context("MEMORY SEARCH REQUIRED"),
            max_seconds=opts.slow_cap_s,
        )

    peers = [
        peer_hook(PEER_FTS5, "peer_fts5.py", store.fts5),
        peer_hook(PEER_SCAN, "peer_scan.py", store.markdown),
        Candidate(
            PEER_GREP,
            ["grep", "-rilF", *[arg for t in terms(prompts.SHIFT) for arg in ("-e", t)], str(store.markdown)],
            env=env,
            cwd=store.project,
            check=check_grep,
            max_seconds=opts.slow_cap_s,
            note="search only: no event parsing, no ranking (a lower bound for a grep-based hook)",
        ),
    ]
    group: list[Candidate] = [floor]
    extra: list[Result] = []
    if gate.missing:
        extra = skipped([NOSHIFT, SHIFT, START, SEARCH], gate.missing)
    else:
        noshift, shift = recall_candidates(opts, gate, store, store.home, transcript, f"recall-{store.size}")
        start = session_start_candidate(gate, store, store.home, f"recall-{store.size}")
        group += [noshift, shift, start, search_candidate(gate, store, store.home, opts.slow_cap_s)]
        group += with_before([start], gate, store)[1:] + recall_twins(opts, gate, store, transcript,
                                                                      f"recall-{store.size}")
        if opts.ledgers:
            for home in filter(None, (store.home, store.before_home)):
                store.setup.append(seed_ledgers(home, opts.ledgers, opts.seed))
    group += peers
    _log(f"recall at {store.size:,} memories: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    results = measure_group(
        group, opts.runs, opts.warmup, seed=opts.seed + store.size, progress=_log, python=opts.python, notes=notes
    )
    order = [FLOOR, NOSHIFT, SHIFT, START, SEARCH, PEER_FTS5, PEER_SCAN, PEER_GREP]
    by_name = {**results, **{r.name: r for r in extra}}
    return Section(
        key=f"recall-{store.size}",
        title=f"Recall, {store.size:,} memories",
        rows=ordered_rows(order, by_name),
        reference=FLOOR,
        info=store.setup + notes,
        versus=SHIFT,
    )


def stop_section(opts: Options, gate: Gate, store: Store, transcripts: list[Transcript]) -> Section:
    env = gate.env(store.home, store.project)
    first = transcripts[0]
    floor_event = prompts.stop_event(
        prompts.session_id("stop-floor"), first.path, store.project, first.last_assistant_message
    )
    group: list[Candidate] = [floor_candidate(opts, env, store.project, floor_event)]
    extra: list[Result] = []
    for t in transcripts:
        name = stop_row(t.target)
        if gate.missing:
            extra += skipped([name], gate.missing)
            continue

        def event(index: int, t: Transcript = t) -> bytes:
            # A fresh session per run: the per-session block cap (default 5) would otherwise turn later runs
            # into ALLOW_CAPPED, which need not read the transcript at all.
            session = prompts.session_id(f"stop-{t.target}", index)
            return prompts.stop_event(session, t.path, store.project, t.last_assistant_message)

        group.append(
            Candidate(
                name,
                gate.hook,
                stdin=event,
                env=env,
                cwd=store.project,
                check=check_block,
                note="fresh session per run",
            )
        )
    group = with_before(group, gate, store)
    _log(f"Stop hook: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    results = measure_group(
        group, opts.runs, opts.warmup, seed=opts.seed + 1, progress=_log, python=opts.python, notes=notes
    )
    by_name = {**results, **{r.name: r for r in extra}}
    info = [f"{format_size(t.target)} transcript: {t.size:,} bytes, {t.lines:,} lines" for t in transcripts]
    info.append(f"store: {store.size:,} memories")
    info += notes
    return Section(
        key="stop",
        title="Stop hook on a turn with evidence (a fix and a decision)",
        rows=ordered_rows([FLOOR, *[stop_row(t.target) for t in transcripts]], by_name),
        reference=FLOOR,
        info=info,
    )


def remember_argv(gate: Gate, store: Store) -> Callable[[int], list[str]]:
    """Distinct realistic memories, some linked to existing ones, for successive `gate remember` calls."""
    fresh = Generator(max(200, store.size // 10), seed=store.size + 99).memories()
    fresh = [m for m in fresh if m["status"] == "active"]
    targets = [m["id"] for m in store.memories[:: max(1, len(store.memories) // 50)] if m["status"] == "active"]

    def argv(index: int) -> list[str]:
        memory = fresh[index % len(fresh)]
        title = f"{memory['title'][:150]} ({index})"  # distinct titles, still within gate's 160 characters
        args = [*gate.cli, "remember", title, "--kind", memory["kind"], "--json"]
        if memory["body"]:
            args += ["--body", memory["body"]]
        for tag in memory["tags"]:
            args += ["--tag", tag]
        if index % 4 == 0:
            args += ["--link", f"relates:{targets[index % len(targets)]}"]
        return args

    return argv


def write_read_sections(opts: Options, gate: Gate, store: Store, transcript: Path) -> list[Section]:
    """N successive `gate remember` on a second copy of the store, then reads on both copies, interleaved."""
    env = gate.env(store.home, store.project)
    floor_event = prompts.prompt_event(prompts.session_id("write-floor"), prompts.SHIFT, transcript, store.project)
    remember_name = f"{REMEMBER} ({opts.remembers} successive calls)"
    before_names = [f"{SHIFT}, before {opts.remembers} remembers", f"{SEARCH}, before {opts.remembers} remembers"]
    after_names = [f"{SHIFT}, after {opts.remembers} remembers", f"{SEARCH}, after {opts.remembers} remembers"]
    write_title = f"Writes: {opts.remembers} successive `gate remember` into {store.size:,} memories"
    read_title = f"Reads before and after {opts.remembers} remembers, {store.size:,} memories"
    if gate.missing:
        floor_only = measure_group(
            [floor_candidate(opts, env, store.project, floor_event)], opts.runs, opts.warmup, python=opts.python
        )
        return [
            Section("writes", write_title, [floor_only[FLOOR], *skipped([remember_name], gate.missing)], FLOOR),
            Section(
                "reads", read_title, [floor_only[FLOOR], *skipped(before_names + after_names, gate.missing)], FLOOR
            ),
        ]
    after_home = store.dir / "home-after"
    seconds = gate_import(gate, store, after_home)
    after_env = gate.env(after_home, store.project)
    _log(f"writes: {opts.remembers} x gate remember (second import took {seconds:.1f} s)")
    rss_runs = min(2, opts.remembers // 2)
    writes = measure_group(
        [
            floor_candidate(opts, after_env, store.project, floor_event),
            Candidate(
                remember_name,
                remember_argv(gate, store),
                env=after_env,
                cwd=store.project,
                check=check_json_key("id"),
                note=f"{opts.remembers - rss_runs} timed calls, then {rss_runs} measured for RSS",
            ),
        ],
        # Exactly N successive remembers in all: the last few are the untimed RSS runs.
        runs=opts.remembers - rss_runs,
        warmup=0,
        seed=opts.seed + 2,
        progress=_log,
        rss_runs=rss_runs,
        python=opts.python,
    )
    group = [floor_candidate(opts, env, store.project, floor_event)]
    for home, (shift_name, search_name), label in (
        (store.home, before_names, "before"),
        (after_home, after_names, "after"),
    ):
        _, shift = recall_candidates(opts, gate, store, home, transcript, f"reads-{label}")
        shift.name = shift_name
        group += [shift, search_candidate(gate, store, home, opts.slow_cap_s, search_name)]
    _log(f"reads before/after: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    reads = measure_group(
        group, opts.runs, opts.warmup, seed=opts.seed + 3, progress=_log, python=opts.python, notes=notes
    )
    order = [FLOOR, before_names[0], after_names[0], before_names[1], after_names[1]]
    return [
        Section(
            "writes", write_title, [writes[FLOOR], writes[remember_name]], FLOOR, [f"fresh import: {seconds:.1f} s"]
        ),
        Section("reads", read_title, [reads[name] for name in order], FLOOR, notes),
    ]


# --- targets --------------------------------------------------------------------------------------------------
def subagents_section(opts: Options, gate: Gate, store: Store, transcript: Path) -> Section:
    env = gate.env(store.home, store.project)
    floor = floor_candidate(opts, env, store.project, prompts.prompt_event(prompts.session_id("floor-sub"),
                                                                            prompts.SHIFT, transcript, store.project))
    _, shift = recall_candidates(opts, gate, store, store.home, transcript, f"subagents-{store.size}")
    twins = recall_twins(opts, gate, store, transcript, f"subagents-{store.size}")[1:]
    return spawn_section(opts, gate, store, transcript, floor, shift, _log, twins)


def _row(sections: dict[str, Section], key: str, name: str) -> Result | None:
    section = sections.get(key)
    return next((row for row in section.rows if row.name == name), None) if section else None


def targets(opts: Options, sections: dict[str, Section]) -> list[Target]:
    """The issue's targets, each a ratio of two medians from the same interleaved group. A target whose rows
    failed their output check is flagged: its timings may be of an error path, not of the real work."""
    big = max(opts.sizes)
    recall = f"recall-{big}"
    at = f"at {big:,}"
    small_t, large_t = min(opts.transcripts), max(opts.transcripts)
    n = opts.remembers

    def ratio(name: str, a: tuple[str, str], b: tuple[str, str], op: str, limit: float) -> Target:
        rows = [_row(sections, *a), _row(sections, *b)]
        medians = [row.median_ms if row else None for row in rows]
        value = medians[0] / medians[1] if medians[0] is not None and medians[1] else None
        cpus = [row.median_cpu_ms if row else None for row in rows]
        cpu_value = cpus[0] / cpus[1] if cpus[0] is not None and cpus[1] else None
        failed = [row.name for row in rows if row is not None and row.failures]
        caveat = f"check failures in: {', '.join(failed)}" if failed else ""
        return Target(name, value, op, limit, caveat=caveat, cpu_value=cpu_value)

    def agent_gap(name: str, claude: str, other: str) -> Target:
        """How far another agent's ratio to the floor is from Claude Code's, in the same interleaved group (issue
        45: within 0.05 either way)."""
        found = [_row(sections, "agents", claude), _row(sections, "agents", other), _row(sections, "agents", FLOOR)]
        rows = [row for row in found if row is not None]

        def gap(medians: list[float | None]) -> float | None:
            if len(medians) < 3 or not all(medians):
                return None
            a, b, f = (m or 0.0 for m in medians)
            return abs(b / f - a / f)

        failed = [row.name for row in rows if row.failures]
        caveat = f"check failures in: {', '.join(failed)}" if failed else ""
        return Target(name, gap([row.median_ms for row in rows]), "<=", 0.05, caveat=caveat,
                      cpu_value=gap([row.median_cpu_ms for row in rows]))

    hook_rows = [
        row
        for section in sections.values()
        for row in section.rows
        if row.name.startswith("gate") and "hook" in row.name and row.peak_rss_mb is not None
        and not row.name.endswith(BEFORE)
    ]
    worst = max(hook_rows, key=lambda row: row.peak_rss_mb or 0.0, default=None)
    # Limits of issue 31 (the hooks at the interpreter's floor) where it set one, else of the issue before.
    return [
        ratio(f"recall hook, shift / floor, {at}", (recall, SHIFT), (recall, FLOOR), "<=", 1.6),
        ratio(f"recall hook, no-shift / floor, {at}", (recall, NOSHIFT), (recall, FLOOR), "<=", 1.2),
        ratio(f"session-start hook with the index / floor, {at}, {opts.ledgers:,} past ledgers", (recall, START),
              (recall, FLOOR), "<=", 1.6),
        ratio(f"Stop hook, {format_size(small_t)} transcript / floor", ("stop", stop_row(small_t)), ("stop", FLOOR),
              "<=", 1.25),
        ratio(
            f"Stop hook, {format_size(large_t)} / {format_size(small_t)} transcript",
            ("stop", stop_row(large_t)),
            ("stop", stop_row(small_t)),
            "<=",
            1.2,
        ),
        ratio(f"FTS5 twin / gate recall hook (shift), {at}", (recall, PEER_FTS5), (recall, SHIFT), ">=", 4.0),
        ratio(
            f"recall hook after / before {n} remembers, at {opts.remember_size:,}",
            ("reads", f"{SHIFT}, after {n} remembers"),
            ("reads", f"{SHIFT}, before {n} remembers"),
            "<=",
            1.1,
        ),
        ratio("spawn hook / floor", ("subagents", SPAWN), ("subagents", FLOOR), "<=", 1.8),
        ratio("spawn hook / recall hook (shift)", ("subagents", SPAWN), ("subagents", SHIFT), "<=", 1.1),
        ratio("tool call inside a subagent / in the main conversation", ("subagents", SUB_TOOL), ("subagents", TOOL),
              "<=", 1.1),
        ratio("edit refused until the agent's search / anchors only", ("search_first", EDIT_REFUSED),
              ("search_first", EDIT_ANCHORS), "<=", 1.1),
        ratio("read-only Bash while the search is owed / anchors only", ("search_first", BASH_OWED),
              ("search_first", BASH_ANCHORS), "<=", 1.1),
        *[agent_gap(f"{what}: {agent}'s × floor minus Claude Code's, either way", claude, other)
          for what, agent, claude, other in agents.pairs(small_t)],
        Target(
            f"gate hook peak RSS, worst row ({worst.name if worst else '–'})",
            worst.peak_rss_mb if worst else None,
            "<=",
            60.0,
            unit="MB",
        ),
    ]


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    memory_gb = None
    with contextlib.suppress(ValueError, OSError):
        memory_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    started = time.perf_counter()
    info = machine()
    info["subreaper"] = become_subreaper()
    work = Path(tempfile.mkdtemp(prefix="gate-bench-"))
    _log(f"work directory: {work}")
    sections: dict[str, Section] = {}
    try:
        src, commit = None, ""
        if opts.gate_src == "HEAD":
            src, commit = snapshot(work)
        elif opts.gate_src:
            src = Path(opts.gate_src).resolve()
        gate = find_gate(opts.python, src, commit)
        _log(f"gate: {gate.missing or gate.location} {commit}")
        if opts.before_src:
            gate.before = find_gate(opts.python, Path(opts.before_src).resolve())
            _log(f"before: {gate.before.missing or gate.before.location} ({shlex.join(gate.before.hook[1:3])})")
        transcript_dir = work / "transcripts"
        transcripts = [
            write_transcript(transcript_dir / f"{format_size(size)}.jsonl", size, seed=opts.seed + 4)
            for size in sorted(set(opts.transcripts))
        ]
        recall_transcript = transcripts[0].path
        stores: dict[int, Store] = {}
        for size in opts.sizes if opts.only not in ("subagents", "search_first", "agents") else [min(opts.sizes)]:
            stores[size] = build_store(size, opts, work, gate)
            _log(stores[size].setup[-1])
            if opts.only in (None, "recall"):
                sections[f"recall-{size}"] = recall_section(opts, gate, stores[size], recall_transcript)
        if opts.only is None:
            sections["stop"] = stop_section(opts, gate, stores[min(opts.sizes)], transcripts)
            if opts.remembers > 0:  # --remembers 0: no write section (it imports the store once more)
                remember_store = stores.get(opts.remember_size) or build_store(opts.remember_size, opts, work, gate)
                for section in write_read_sections(opts, gate, remember_store, recall_transcript):
                    sections[section.key] = section
        if not gate.missing and opts.only in (None, "subagents"):
            sections["subagents"] = subagents_section(opts, gate, stores[min(opts.sizes)], recall_transcript)
        if not gate.missing and opts.only in (None, "search_first"):
            store = stores[min(opts.sizes)]
            floor = floor_candidate(opts, gate.env(store.home, store.project), store.project, prompts.prompt_event(
                prompts.session_id("floor-first"), prompts.SHIFT, recall_transcript, store.project))
            sections["search_first"] = search_first_section(opts, gate, store, recall_transcript, floor, _log)
        if not gate.missing and opts.only in (None, "agents"):
            store = stores[min(opts.sizes)]
            claude = transcripts[0]  # the smallest: each agent's Stop row reads the same turn, at one size
            rollout = write_rollout(transcript_dir / f"{format_size(claude.target)}.rollout.jsonl", claude.size,
                                    seed=opts.seed + 4, target=claude.target)
            chat = write_chat(transcript_dir / f"{format_size(claude.target)}.gemini.jsonl", claude.size,
                              seed=opts.seed + 5, target=claude.target)
            env = agents.with_gate_on_path(gate.env(store.home, store.project), gate.cli)
            floor = floor_candidate(opts, env, store.project, prompts.prompt_event(
                prompts.session_id("floor-agents"), prompts.SHIFT, recall_transcript, store.project))
            sections["agents"] = agents.agents_section(opts, gate, store, claude, rollout, chat, floor, _log)
    finally:
        if opts.keep:
            _log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    info["load_after"] = [round(x, 2) for x in os.getloadavg()]
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": info,
        "options": {
            "sizes": opts.sizes,
            "runs": opts.runs,
            "warmup": opts.warmup,
            "transcripts": [format_size(t) for t in opts.transcripts],
            "remembers": opts.remembers,
            "remember_size": opts.remember_size,
            "quick": opts.quick,
            "python": opts.python,
        },
        "gate": gate.missing or f"{gate.location}" + (f" (snapshot of {gate.commit})" if gate.commit else "")
        + (f"; [before] rows: {gate.before.missing or gate.before.location}" if gate.before else ""),
        "duration_s": round(time.perf_counter() - started, 1),
    }
    goals = targets(opts, sections)
    markdown = render_markdown(meta, list(sections.values()), goals)
    data = to_json(meta, list(sections.values()), goals)
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(markdown, encoding="utf-8")
    opts.out.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=2) if opts.json else markdown)
    _log(f"wrote {opts.out} and {opts.out.with_suffix('.json')} in {meta['duration_s']} s")
    return 0
