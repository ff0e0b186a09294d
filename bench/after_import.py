"""The first hooks after `gate import` of N memories (issue: the work an import leaves belongs to the import, or
to a background build the hook does not wait for): times the import, then a SessionStart and a prompt, each the
first of its kind in a fresh process, in a throwaway GATE_HOME and project.

    python -m bench.after_import --size 20000 [--no-ids] [--interrupt-at N] [--gate-src DIR]

`--interrupt-at N` stops the import with SIGINT after its Nth file (gate/memory/store/killpoints.py), times the first
hooks after that, then the same import run again and the hooks after it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import Generator, write_jsonl


def _env(home: Path, project: Path, src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATE_")}
    env["GATE_HOME"] = str(home)
    env["HOME"] = str(home)
    env["CLAUDE_PROJECT_DIR"] = str(project)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def _timed(command: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"") -> tuple[float, float, int, str]:
    """(wall seconds, child CPU seconds, exit status, its output's first line) of one run."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=3600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode(errors="replace")[-600:])
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    said = (done.stdout or done.stderr).decode(errors="replace").strip().splitlines()
    return wall, cpu, done.returncode, said[0][:90] if said else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.after_import", description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-ids", action="store_true", help="lines without ids (the import mints them)")
    parser.add_argument("--before", type=int, default=10,
                        help="memories in the store (and one hook run on them) before the import (default 10)")
    parser.add_argument("--interrupt-at", type=int, default=0, help="SIGINT the import after its Nth file")
    parser.add_argument("--gate-src", type=Path, help="a source checkout put first on PYTHONPATH")
    args = parser.parse_args(argv)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="gate-after-import-") as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "home", "project")
        project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        memories = Generator(args.size, args.seed).memories()
        env = _env(home, project, args.gate_src)
        cli = [python, "-m", "gate.cli"]
        hook = [python, "-P", "-c", "from gate.hook import main; main()"]
        start = {"session_id": "bench-after-import", "transcript_path": "", "cwd": str(project),
                 "hook_event_name": "SessionStart", "source": "startup"}
        if args.before:  # a store in use: its cue table and index built by a hook before the import
            earlier = Generator(args.before, args.seed + 1).memories()
            for memory in earlier:
                memory["id"] = f"before-{memory['id']}"
                memory["links"] = []
            write_jsonl(earlier, Path(tmp, "before.jsonl"))
            _timed([*cli, "import", str(Path(tmp, "before.jsonl"))], env, project)
            _timed(hook, env, project, json.dumps(start).encode())
        if args.no_ids:
            for memory in memories:
                memory.pop("id", None)
                memory["links"] = []
        jsonl = Path(tmp, "memories.jsonl")
        write_jsonl(memories, jsonl)
        prompt = {"session_id": "bench-after-import", "transcript_path": "", "cwd": str(project),
                  "hook_event_name": "UserPromptSubmit", "prompt": "why does the deploy script time out on staging"}
        rows = []

        def hooks(after: str) -> None:
            for name, event in (("SessionStart", start), ("prompt", prompt), ("prompt", prompt)):
                rows.append((f"{name} after {after}", *_timed(hook, env, project, json.dumps(event).encode())))

        if args.interrupt_at:
            stopped = {**env, "GATE_KILL_AT": f"files.placed@{args.interrupt_at}", "GATE_KILL_SIGNAL": "INT"}
            rows.append(("import, interrupted", *_timed([*cli, "import", str(jsonl)], stopped, project)))
            hooks("the interrupt")
        rows.append(("gate import", *_timed([*cli, "import", str(jsonl)], env, project)))
        hooks("the import")
        print(f"{args.size} memories{' without ids' if args.no_ids else ''}, {args.before} in the store before")
        for name, wall, cpu, code, said in rows:
            print(f"  {name:<28} wall {wall:7.3f} s  cpu {cpu:7.3f} s  exit {code:>3}  {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
