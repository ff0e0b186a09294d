"""Where a hook's time goes: `python -m bench.profile --size 100000 --event shift`.

Measures the hook against the floor (interleaved, whole-process), splits the difference into the imports the
floor does not pay (-X importtime) and the rest (work), lists the slowest of those imports, and prints a
cProfile of one run (top functions by own time, and gate's own functions by cumulative time).
"""

from __future__ import annotations

import argparse
import pstats
import re
import shutil
import sys
import tempfile
from pathlib import Path

from bench import prompts
from bench.measure import Candidate, become_subreaper, measure_group, run_once, settle
from bench.run import (
    SCRIPTS,
    build_store,
    check_block,
    find_gate,
    parse_args,
    recall_candidates,
    snapshot,
)
from bench.transcript import parse_size, write_transcript

_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def imported(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> list[tuple[str, int, int, int]]:
    """Modules a command imports, in order: (name, own µs, cumulative µs, nesting depth), via -X importtime."""
    run = run_once([argv[0], "-X", "importtime", *argv[1:]], stdin, env, cwd)
    out: list[tuple[str, int, int, int]] = []
    for line in run.stderr.decode(errors="replace").splitlines():
        match = _IMPORT_LINE.match(line)
        if match:
            depth = (len(match.group(3)) - 1) // 2
            out.append((match.group(4), int(match.group(1)), int(match.group(2)), depth))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000, help="memories in the store (default 1000)")
    parser.add_argument("--event", choices=("shift", "noshift", "stop"), default="shift")
    parser.add_argument("--transcript", default="50KB", help="transcript size for the event (default 50KB)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--gate-src", help="as for python -m bench: a source directory, or HEAD")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    opts = parse_args(["--sizes", str(args.size), "--python", args.python])
    become_subreaper()  # so the hooks' detached background work can be waited for (see measure.settle)
    work = Path(tempfile.mkdtemp(prefix="gate-bench-profile-"))
    try:
        src, commit = snapshot(work) if args.gate_src == "HEAD" else (args.gate_src and Path(args.gate_src), "")
        gate = find_gate(args.python, Path(src) if src else None, commit)
        if gate.missing:
            print(f"gate is not runnable: {gate.missing}", file=sys.stderr)
            return 1
        store = build_store(args.size, opts, work, gate)
        print(*store.setup, sep="\n", file=sys.stderr)
        transcript = write_transcript(work / "transcript.jsonl", parse_size(args.transcript))
        env = gate.env(store.home, store.project)
        if args.event == "stop":
            hook = Candidate(
                "gate Stop hook",
                gate.hook,
                stdin=lambda i: prompts.stop_event(
                    prompts.session_id("profile-stop", i),
                    transcript.path,
                    store.project,
                    transcript.last_assistant_message,
                ),
                env=env,
                cwd=store.project,
                check=check_block,
            )
        else:
            noshift, shift = recall_candidates(opts, gate, store, store.home, transcript.path, "profile")
            hook = shift if args.event == "shift" else noshift
        stdin0 = hook.stdin_for(0) or b""
        floor_argv = [args.python, str(SCRIPTS / "floor.py")]
        floor_mods = {m[0] for m in imported(floor_argv, stdin0, env, store.project)}
        # Warm-up runs first: the first hooks after an import may catch the index up, which a steady-state
        # hook does not do (and which imports the TOML reader and the memory model).
        import_ms: list[float] = []
        extra: list[tuple[str, int, int, int]] = []
        for index in range(9_990, 9_995):
            if hook.prepare:
                hook.prepare(index)
            if index < 9_992:
                run_once(hook.argv_for(index), hook.stdin_for(index), env, store.project)
                settle()
                continue
            mods = imported(hook.argv_for(index), hook.stdin_for(index) or b"", env, store.project)
            extra = [m for m in mods if m[0] not in floor_mods]
            # Top-level entries' cumulative times: everything their import pulled in, counted once.
            import_ms.append(sum(m[2] for m in extra if m[3] == 0) / 1000)
        # A process that imports exactly what the hook imported and does nothing else: whole-process import
        # cost without -X importtime's own overhead (which overstates it for many small modules).
        imports_code = "import json, sys\nevent = json.load(sys.stdin)\n" + "".join(
            # importtime also lists attempts that failed (e.g. `nt` on Linux): skipped here too.
            f"try:\n    import {name}\nexcept ImportError:\n    pass\n"
            for name, _, _, _ in extra
            if not name.startswith("_")
        )
        imports_code += "sys.stdout.write(json.dumps({}))\n"
        floor = Candidate("floor", floor_argv, stdin=stdin0, env=env, cwd=store.project)
        floor_imports = Candidate(
            "floor + the hook's imports, no work",
            [args.python, "-c", imports_code],
            stdin=stdin0,
            env=env,
            cwd=store.project,
        )
        group = [floor, floor_imports, hook]
        results = measure_group(group, args.runs, warmup=2, python=args.python)
        f, fi, h = (results[c.name].median_ms or 0.0 for c in group)
        print(f"\n## {hook.name}, {args.size:,} memories ({gate.location} {commit})\n")
        print("| part | median ms | p95 ms | peak RSS MB |\n|---|---:|---:|---:|")
        for cand in group:
            r = results[cand.name]
            print(f"| {cand.name} | {r.median_ms:.1f} | {r.p95_ms:.1f} | {r.peak_rss_mb:.1f} |")
        print(
            f"\nhook / floor {h / f:.2f}: imports beyond the floor ({len(extra)} modules) {fi - f:.1f} ms, work "
            f"{h - fi:.1f} ms (differences of medians: a few ms either way is noise on a shared machine). "
            f"-X importtime puts the imports at {sorted(import_ms)[len(import_ms) // 2]:.1f} ms (it overstates)."
        )
        failures = results[hook.name].failures
        if failures:
            print(f"WARNING: {failures} hook runs failed their check: {results[hook.name].first_failure}")

        print(f"\n### slowest imports the floor does not pay (own time, one run, {len(extra)} modules)\n")
        for name, own, cum, _ in sorted(extra, key=lambda item: -item[1])[: args.top]:
            print(f"- {name}: {own / 1000:.1f} ms own, {cum / 1000:.1f} ms with what it imported")

        profile_file = work / "hook.prof"
        if hook.prepare:
            hook.prepare(10_001)
        settle()
        # cProfile takes a script, not -c: the hook's -c code goes into a file, run with the hook's -P. It calls
        # main(), not entry(): entry() leaves by os._exit, before cProfile could write its numbers.
        argv = hook.argv_for(10_001)
        entry = work / "hook_entry.py"
        code = argv[argv.index("-c") + 1].replace("import entry; entry()", "import main; main()")
        entry.write_text(code + "\n")
        run_once(
            [args.python, "-P", "-m", "cProfile", "-o", str(profile_file), str(entry)],
            hook.stdin_for(10_001),
            env,
            store.project,
        )
        stats = pstats.Stats(str(profile_file))
        print("\n### cProfile, one run (profiler overhead included)\n")
        print(f"total: {stats.total_tt * 1000:.1f} ms\n")  # type: ignore[attr-defined]
        rows = stats.stats  # type: ignore[attr-defined]
        own = [
            (key, value)
            for key, value in rows.items()
            if "importlib" not in key[0] and not key[0].startswith("<frozen")
        ]
        print("by own time:")
        for (file, line, func), (_, calls, tt, ct, _) in sorted(own, key=lambda kv: -kv[1][2])[: args.top]:
            print(
                f"- {tt * 1000:7.1f} ms own, {ct * 1000:7.1f} ms cum, {calls:6} calls  {Path(file).name}:{line} {func}"
            )
        print("\ngate's functions by cumulative time:")
        gate_rows = [(key, value) for key, value in own if f"{Path('gate')}" in key[0] and "/gate/" in key[0]]
        for (file, line, func), (_, calls, tt, ct, _) in sorted(gate_rows, key=lambda kv: -kv[1][3])[: args.top]:
            print(
                f"- {ct * 1000:7.1f} ms cum, {tt * 1000:7.1f} ms own, {calls:6} calls  {Path(file).name}:{line} {func}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
