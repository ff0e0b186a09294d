"""The benchmark never rots: `python -m bench --quick` on a tiny store runs and fills every row of its table.

CI asserts that it runs and that each row measured what its name says (the runner checks every output: a
shift delivers hits, a no-shift prompt stays silent, the Stop hook blocks); it asserts no timings.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

REMEMBERS = 6
ROWS = [
    "floor: stdlib hook (read stdin, print JSON)",
    "gate recall hook, no-shift prompt",
    "gate recall hook, shift prompt (hits)",
    "gate session-start hook (standing memories + index)",
    "gate search",
    "peer: sqlite FTS5 bm25 hook",
    "peer: markdown-scan hook (python)",
    "peer: grep -rilF over markdown files",
    "gate Stop hook, 50KB transcript",
    "gate Stop hook, 1MB transcript",
    f"gate remember ({REMEMBERS} successive calls)",
    f"gate recall hook, shift prompt (hits), before {REMEMBERS} remembers",
    f"gate recall hook, shift prompt (hits), after {REMEMBERS} remembers",
    f"gate search, before {REMEMBERS} remembers",
    f"gate search, after {REMEMBERS} remembers",
    "gate PreToolUse hook, spawn (Agent, task with hits)",
    "gate PreToolUse hook, Read without a cue",
    "gate PreToolUse hook, Read inside a subagent, without a cue",
    "gate SubagentStop hook",
    "gate PreToolUse hook, Edit without a cue (anchors only)",
    "gate PreToolUse hook, Edit refused until the agent's search",
    "gate PreToolUse hook, read-only Bash without a cue (anchors only)",
    "gate PreToolUse hook, read-only Bash while the search is owed (passes)",
]
# The agents section (issue 45): each hook for Claude Code, Codex CLI and Gemini CLI, side by side, at the smallest
# transcript size. Code from before the other hosts cannot answer them, so --before runs none of its rows.
AGENT_ROWS = [
    "gate recall hook, shift prompt (hits), Claude Code",
    "gate recall hook, shift prompt (hits), Codex",
    "gate Stop hook, evidence turn, Claude Code (50KB JSONL transcript)",
    "gate Stop hook, evidence turn, Codex (50KB rollout)",
    "gate PreToolUse hook, first edit refused until the agent's search, Claude Code (Edit)",
    "gate PreToolUse hook, first edit refused until the agent's search, Codex (apply_patch)",
    "gate recall hook, shift prompt (hits), Gemini",
    "gate Stop hook, evidence turn, Gemini (50KB chat recording)",
    "gate PreToolUse hook, first edit refused until the agent's search, Gemini (replace)",
]


# The agent-search section weighs the check against the same code's anchors-only call, in one code: code from
# before the check cannot refuse, so --before runs none of its rows.
SEARCH_FIRST_ROWS = ROWS[-4:]
# Rows that --before doubles: each other gate hook row, run by the other code too.
BEFORE_ROWS = [
    row + " [before]"
    for row in ROWS
    if row.startswith("gate") and "hook" in row and "remember" not in row and row not in SEARCH_FIRST_ROWS
]


def test_quick_bench_fills_every_row(tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    before = tmp_path / "before-src"  # other code to compare with: here a copy of this checkout's
    shutil.copytree(REPO / "gate", before / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", before / "rules")
    argv = [sys.executable, "-m", "bench", "--quick", "--sizes", "200", "--runs", "2", "--warmup", "1"]
    argv += ["--transcripts", "50KB,1MB", "--remembers", str(REMEMBERS), "--out", str(out), "--before", str(before)]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    table = out.read_text(encoding="utf-8")
    assert table in done.stdout
    for row in ROWS + AGENT_ROWS + [r for r in BEFORE_ROWS if ", before " not in r and ", after " not in r]:
        assert f"| {row} |" in table, f"missing row {row!r}"
    assert "## Targets" in table

    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    rows = [row for section in data["sections"] for row in section["rows"]]
    assert {row["name"] for row in rows} >= set(ROWS + AGENT_ROWS)
    assert not [row for row in rows if row["name"] in [r + " [before]" for r in AGENT_ROWS]]
    for row in rows:
        assert not row["skipped"], f"{row['name']}: skipped ({row['skipped']})"
        assert row["n"] >= 1 and row["median_ms"] > 0 and row["peak_rss_mb"] > 0, row["name"]
        assert row["median_cpu_ms"] > 0 and len(row["cpu_ms"]) == row["n"], row["name"]
        assert row["failures"] == 0, f"{row['name']}: {row['first_failure']}"
    assert len(data["targets"]) == 19
    gaps = [target for target in data["targets"] if "minus Claude Code's" in target["name"]]
    assert len(gaps) == 6 and all(target["value"] is not None and not target["caveat"] for target in gaps)
    assert all(target["cpu_value"] for target in data["targets"] if target["value"] and "RSS" not in target["name"])
    assert "| CPU ms | CPU × floor |" in table


def test_a_snapshot_runs_its_own_hook_under_the_launchers_command(tmp_path: Path) -> None:
    """--gate-src / --before: `-I` ignores PYTHONPATH, so the snapshot's hook command must name the snapshot."""
    from bench.run import find_gate

    src = tmp_path / "snapshot"
    shutil.copytree(REPO / "gate", src / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", src / "rules")
    gate = find_gate(sys.executable, src)
    assert not gate.missing and gate.location == str(src / "gate")
    assert gate.hook[1:4] == ["-I", "-S", "-c"] and str(src) in gate.hook[4]
    probe = gate.hook[4].replace("from gate.hook import entry; entry()", "import gate; print(gate.__file__)")
    done = subprocess.run([*gate.hook[:4], probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.stdout.strip() == str(src / "gate" / "__init__.py"), done.stderr
