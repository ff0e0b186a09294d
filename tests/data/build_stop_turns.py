"""Writes the labelled Stop turns: stop_turns/<name>.jsonl (a transcript as the CLI writes it) + labels.toml.

Run from the repository root after editing a turn: `python tests/data/build_stop_turns.py`. Each file holds an
earlier turn, then the labelled turn with the noise lines the CLI interleaves; a few end with a torn line.
Labels say what a person would decide at that Stop: `block` when the turn decided, fixed, learned something or
heard a lasting preference and stored nothing; `allow` otherwise (trivial, pure reads and explanations,
feature work with nothing to remember, or a store decision already made). `kinds` names what a person would
cite; it documents the label and is not scored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_transcript import Transcript

HERE = Path(__file__).parent / "stop_turns"
R = "/workspace/project"

Step = tuple[Any, ...]
TURNS: list[dict[str, Any]] = []


def turn(name: str, label: str, prompt: str, *steps: Step, kinds: tuple[str, ...] = (), note: str = "") -> None:
    TURNS.append({"name": name, "label": label, "prompt": prompt, "steps": steps, "kinds": kinds, "note": note})


def say(text: str) -> Step:
    return ("say", text)


def tool(name: str, tool_input: dict[str, Any], result: str, is_error: bool = False, text: str = "") -> Step:
    return ("tool", name, tool_input, result, is_error, text)


def bash(command: str, result: str, is_error: bool = False, text: str = "") -> Step:
    return tool("Bash", {"command": command, "description": "run"}, result, is_error, text)


def read(path: str, content: str = "     1\t...") -> Step:
    return tool("Read", {"file_path": f"{R}/{path}"}, content)


def edit(path: str, old: str = "a", new: str = "b") -> Step:
    return tool(
        "Edit",
        {"file_path": f"{R}/{path}", "old_string": old, "new_string": new},
        f"The file {R}/{path} has been updated.",
    )


def write(path: str, content: str = "...") -> Step:
    return tool("Write", {"file_path": f"{R}/{path}", "content": content}, f"File created successfully at: {R}/{path}")


def feedback(reason: str) -> Step:
    return ("feedback", reason)


def noise(kind: str) -> Step:
    return ("noise", kind)


PYTEST_FAIL = (
    "F.........\n=================================== FAILURES ===================================\n"
    "E       AssertionError: assert Decimal('17.99') == Decimal('18.00')\n"
    "FAILED tests/test_invoice.py::test_discount_total - AssertionError\n1 failed, 9 passed in 0.41s"
)

# ---------------------------------------------------------------------------------------------------------
# turns a person would block

turn(
    "decision-queue-backend",
    "block",
    "We need a job queue for the thumbnail worker. Redis or SQLite?",
    read("worker/main.py"),
    noise("api-request-blob"),
    say(
        "We'll go with SQLite because the worker runs on a single host and the app already ships SQLite; "
        "Redis would be one more service to operate and back up."
    ),
    write("worker/queue.py"),
    say("Added a SQLite-backed queue in worker/queue.py with a `claim_next()` that uses `UPDATE … RETURNING`."),
    kinds=("decision",),
)
turn(
    "decision-async-client",
    "block",
    "the sync requests calls block the event loop in the crawler",
    tool("Grep", {"pattern": "requests\\.", "path": f"{R}/crawler"}, "crawler/fetch.py:12: requests.get(url)"),
    edit("crawler/fetch.py"),
    say(
        "I replaced requests with httpx.AsyncClient rather than running requests in a thread pool, since the "
        "crawler already runs on asyncio and one shared client keeps a single connection pool."
    ),
    kinds=("decision",),
)
turn(
    "fix-failing-test",
    "block",
    "tests/test_invoice.py::test_discount_total is failing",
    bash("pytest -q tests/test_invoice.py", PYTEST_FAIL, is_error=True),
    read("billing/invoice.py"),
    edit("billing/invoice.py"),
    noise("system"),
    bash("pytest -q tests/test_invoice.py", "..........\n10 passed in 0.38s"),
    say("The discount was applied after rounding each line; it now rounds once on the total. The test passes."),
    kinds=("fix",),
)
turn(
    "fix-importer-encoding",
    "block",
    "why does the importer crash on some CSV files?",
    read("importer/csv_import.py"),
    bash(
        "python -m importer samples/bank_march.csv",
        "Traceback (most recent call last):\n  ...\nUnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9",
        is_error=True,
    ),
    say(
        "The root cause is that the bank's exports are Windows-1252, not UTF-8, and the importer opens them with "
        "the default encoding. I made it check for a UTF-8 BOM and fall back to cp1252."
    ),
    edit("importer/csv_import.py"),
    kinds=("fix",),
)
turn(
    "gotcha-index-reload",
    "block",
    "new memories don't show up in search until I restart the process",
    read("gate/memory/index.py"),
    say(
        "Turns out tantivy's searcher only sees segments that were committed before the reader was created: "
        "after `writer.commit()` the index has to be reloaded (`index.reload()`). I added the reload after each "
        "commit."
    ),
    edit("gate/memory/index.py"),
    kinds=("gotcha",),
)
turn(
    "gotcha-staging-vpn",
    "block",
    "the integration tests can't reach the staging database from CI",
    bash(
        "psql \"$STAGING_DSN\" -c 'select 1'",
        'psql: error: connection to server at "10.20.0.5", port 5432 failed: timeout expired',
        is_error=True,
    ),
    read(".github/workflows/integration.yml"),
    say(
        "The staging database only accepts connections from the VPN range. Note that the CI runners need the "
        "WireGuard sidecar enabled or every connection times out; I enabled it in the integration workflow."
    ),
    edit(".github/workflows/integration.yml"),
    kinds=("gotcha",),
)
turn(
    "preference-pnpm",
    "block",
    "From now on use pnpm, not npm, in this repo.",
    say("Got it, I'll use pnpm for installs and scripts here."),
    kinds=("preference",),
)
turn(
    "preference-no-squash",
    "block",
    "Please never squash my commits when you merge a branch; I prefer keeping the history as it is.",
    say("Understood."),
    kinds=("preference",),
)
turn(
    "learning-hook-latency",
    "block",
    "is the hook fast enough?",
    bash(
        "hyperfine --warmup 3 'python -m gate.hook < tests/data/event.json'",
        "Benchmark 1: python -m gate.hook < tests/data/event.json\n  Time (mean ± σ):      48.2 ms ±   1.9 ms",
    ),
    bash(
        "python -X importtime -m gate.hook < tests/data/event.json 2>&1 | sort -t'|' -k2 -n | tail -3",
        "import time:     30912 |      31377 | tantivy",
    ),
    say(
        "I measured it with hyperfine: the hook takes 48 ms on average, and 31 ms of that is importing tantivy. "
        "The stdlib-only floor on this machine is 22 ms, so we are at 2.2x, above the 1.5x budget."
    ),
    kinds=("learning",),
)
turn(
    "fix-cargo-build",
    "block",
    "cargo build is broken after the dependency update",
    bash(
        "cargo build",
        "error[E0433]: failed to resolve: could not find `ts_seconds` in `serde`\n  --> src/model.rs:14:22",
        is_error=True,
    ),
    read("src/model.rs"),
    edit("src/model.rs"),
    bash("cargo build", "   Compiling app v0.3.1\n    Finished `dev` profile [unoptimized + debuginfo] in 6.12s"),
    say("chrono's serde helpers moved to `chrono::serde::ts_seconds`; updated the attribute path and it builds."),
    kinds=("fix",),
)
turn(
    "decision-and-fix-export",
    "block",
    "The nightly export job keeps timing out",
    read("exports/bank_csv.py"),
    noise("cost-state"),
    say(
        "The export builds the whole file in memory before uploading. I decided to stream rows into the SFTP "
        "upload instead of buffering, because memory also spiked to 3 GB on month end."
    ),
    edit("exports/bank_csv.py"),
    bash("pytest -q tests/exports", "....\n4 passed in 1.02s"),
    kinds=("decision", "fix"),
)
turn(
    "decision-keep-wrapper",
    "block",
    "refactor the config loader into its own module",
    write("app/config/loader.py"),
    edit("app/settings.py"),
    bash("pytest -q", "........................................\n40 passed in 2.10s"),
    say(
        "Moved the loader to app/config/loader.py. I kept `load_config` in app/settings.py as a thin re-export "
        "rather than updating every import, because three external plugins import it from there."
    ),
    kinds=("decision",),
)
turn(
    "fix-flaky-race",
    "block",
    "test_concurrent_writes is flaky",
    bash(
        "pytest -q tests/test_store.py::test_concurrent_writes --count 50",
        "6 failed, 44 passed in 12.3s",
        is_error=True,
    ),
    read("gate/memory/files.py"),
    edit("gate/memory/files.py"),
    bash("pytest -q tests/test_store.py::test_concurrent_writes --count 50", "50 passed in 11.8s"),
    say("Two writers raced between the exists() check and open(); creation now uses O_CREAT | O_EXCL."),
    kinds=("fix",),
)
turn(
    "gotcha-macos-state-dir",
    "block",
    "why does the hook write its ledger to a weird place on my Mac?",
    read("gate/paths.py"),
    say(
        "On macOS the state directory is ~/Library/Application Support/memory-gate, not ~/.local/state. Watch "
        "out: XDG_STATE_HOME is ignored there, only GATE_HOME moves it, which is why the tests always set it."
    ),
    kinds=("gotcha",),
)
turn(
    "preference-docstrings",
    "block",
    "Going forward, write docstrings in the imperative mood and keep them to one line where you can. Now add "
    "one to load_rules.",
    edit("gate/rules.py"),
    say("Added a one-line docstring to load_rules."),
    kinds=("preference",),
)
turn(
    "fix-cache-key-timezone",
    "block",
    "the dashboard shows yesterday's numbers until noon",
    read("dashboard/cache.py"),
    read("dashboard/report.py"),
    say(
        "This was caused by the cache key using the UTC date while the report uses Sydney time, so until the UTC "
        "date rolls over the key still points at yesterday's entry. The key now uses the report's local date."
    ),
    edit("dashboard/cache.py"),
    kinds=("fix",),
)
turn(
    "decision-by-user",
    "block",
    "Let's go with Postgres for the audit log rather than JSON files, since we need queries by session. Set up "
    "the table.",
    write("migrations/0007_audit_log.sql"),
    say("Created the audit_log table with an index on (session_id, created_at)."),
    kinds=("decision",),
)
turn(
    "learning-stop-hook-active",
    "block",
    "why does our Stop guard let the second continuation through?",
    read("gate/gates/writeback.py"),
    say(
        "The docs say stop_hook_active is set only on the Stop right after a hook-caused continuation, but in "
        "practice the CLI sets it on every Stop until the next user prompt, even with tool calls in between. "
        "That is undocumented, and our guard assumed the documented behaviour."
    ),
    kinds=("learning",),
)
turn(
    "gotcha-requires-flag",
    "block",
    "the e2e run hangs at the permission prompt",
    bash("IS_SANDBOX=1 claude -p hi --dangerously-skip-permissions --output-format json", '{"result": "hi"}'),
    say(
        "As root, --dangerously-skip-permissions is refused unless IS_SANDBOX=1 is set, and without the flag the "
        "headless run waits for a permission answer forever. The e2e harness now sets IS_SANDBOX=1."
    ),
    edit("tests/e2e/conftest.py"),
    kinds=("gotcha",),
    note="no trigger phrase: the trap is stated plainly",
)
turn(
    "fix-asked-edit-then-pass",
    "block",
    "fix the crash when the config file is empty",
    read("app/config/loader.py"),
    edit("app/config/loader.py"),
    bash("pytest -q tests/test_config.py", ".......\n7 passed in 0.21s"),
    say("An empty file parsed to None and the loader indexed it; it now treats an empty file as an empty table."),
    kinds=("fix",),
)

# ---------------------------------------------------------------------------------------------------------
# turns a person would let end

turn("trivial-thanks", "allow", "thanks!", say("You're welcome!"))
turn(
    "explain-load-rules",
    "allow",
    "what does load_rules do?",
    read("gate/rules.py"),
    say(
        "It reads rules/<name>.toml from three layers: the shipped rules, the user's config dir and the "
        "project's .gate/rules. Later layers win; tables merge key by key and lists are replaced whole, because "
        "a user must be able to restate a list."
    ),
)
turn(
    "decision-already-stored",
    "allow",
    "We need a job queue for the thumbnail worker. Redis or SQLite?",
    say("We'll go with SQLite because the worker runs on a single host; Redis would be one more service."),
    write("worker/queue.py"),
    bash(
        'gate remember "Job queue is SQLite: one host, no extra service" --kind decision --path "worker/*"',
        '{"id": "m-4f2a1c"}',
    ),
    say("Added the queue and stored the decision as m-4f2a1c."),
)
turn(
    "fix-already-saved",
    "allow",
    "the importer crashes on the March bank file again",
    bash("python -m importer samples/bank_march.csv", "UnicodeDecodeError: 'utf-8' codec can't decode", True),
    say(
        "The root cause is the same Windows-1252 encoding as last time: this file came through the old upload "
        "path that skips the encoding check. I routed it through the new path. This is already saved in memory "
        "as m-7f3a9c, so there is nothing new to store."
    ),
    edit("importer/upload.py"),
)
turn(
    "list-modules",
    "allow",
    "list the modules under gate/memory",
    tool("Glob", {"pattern": "gate/memory/*.py", "path": R}, "gate/memory/model.py\ngate/memory/files.py"),
    say("gate/memory has model.py, files.py, index.py and search.py."),
)
turn(
    "feature-json-flag",
    "allow",
    "add a --json flag to gate stats",
    read("gate/commands/stats.py"),
    edit("gate/commands/stats.py"),
    edit("tests/test_stats.py"),
    bash("pytest -q tests/test_stats.py", "......\n6 passed in 0.30s"),
    say("`gate stats --json` now prints the counters as one JSON object; added a test."),
)
turn(
    "rename-helper",
    "allow",
    "rename the helper _norm to normalise_path everywhere",
    tool("Grep", {"pattern": "_norm\\b", "path": R}, "gate/a.py\ngate/b.py\ntests/test_a.py"),
    edit("gate/a.py"),
    edit("gate/b.py"),
    edit("tests/test_a.py"),
    bash("pytest -q", "120 passed in 3.2s"),
    say("Renamed in 3 files; the suite passes."),
)
turn(
    "options-question",
    "allow",
    "which queue backend should we use for the worker?",
    say(
        "Two options. SQLite: no extra service, fine while the worker runs on one host. Redis: survives "
        "multiple workers on several hosts, but it is one more thing to run. Do you want me to go with SQLite "
        "for now?"
    ),
)
turn(
    "fix-stored-python-m",
    "allow",
    "tests/test_invoice.py::test_discount_total is failing",
    bash("pytest -q tests/test_invoice.py", PYTEST_FAIL, is_error=True),
    edit("billing/invoice.py"),
    bash("pytest -q tests/test_invoice.py", "10 passed in 0.38s"),
    bash(
        'python -m gate.cli remember "Invoice totals round once, on the total, not per line" --kind fix',
        '{"id": "m-0c1d2e"}',
    ),
    say("Fixed and stored as m-0c1d2e."),
)
turn(
    "gotcha-stored-abs-path",
    "allow",
    "why do new memories not show up in search?",
    say("Turns out the searcher must be reloaded after each commit; I added the reload."),
    edit("gate/memory/index.py"),
    bash(
        '/home/dev/.local/bin/gate remember "tantivy: reload the index after commit" --kind gotcha',
        '{"id": "m-9a8b7c"}',
    ),
)
turn(
    "typo-nothing-to-store",
    "allow",
    "fix the typo in the README install section",
    edit("README.md"),
    say("Fixed 'instal' to 'install'. Nothing worth storing: it's all in the diff."),
)
turn(
    "stored-after-feedback",
    "allow",
    "We need a job queue for the thumbnail worker. Redis or SQLite?",
    say("We'll go with SQLite because the worker runs on a single host."),
    write("worker/queue.py"),
    feedback("MEMORY CHECK: this turn made a decision. …If it is already saved, say so and stop."),
    bash('gate remember "Job queue is SQLite: single host" --kind decision', '{"id": "m-5e6f70"}'),
    say("Stored as m-5e6f70."),
)
turn(
    "run-tests-only",
    "allow",
    "run the test suite",
    bash("pytest -q", "212 passed in 8.31s"),
    say("All 212 tests pass."),
)
turn(
    "tests-fail-reported",
    "allow",
    "run the tests",
    bash("pytest -q", "FAILED tests/test_ledger.py::test_cap - assert 6 == 5\n2 failed, 210 passed", True),
    say("Two tests fail in tests/test_ledger.py, both about the block cap. Want me to look into them?"),
)
turn(
    "git-commit",
    "allow",
    "commit this with a good message",
    bash("git add -A && git commit -m 'stats: add --json output'", "[main 3f2a1b0] stats: add --json output"),
    say("Committed as 3f2a1b0."),
)
turn(
    "explain-always",
    "allow",
    "how does the recall gate pick the search terms?",
    read("gate/gates/topic.py"),
    say(
        "It always takes the 3 to 6 strongest content terms of the prompt: new terms rank before ones the "
        "session already had, and adjacent terms are joined into a phrase. It never searches for stopwords."
    ),
)
turn(
    "why-always-question-unresolved",
    "allow",
    "why does the build always fail on CI but never locally?",
    bash("gh run view --log-failed", "gh: To use GitHub CLI, please authenticate", True),
    say("I couldn't get the CI log: gh is not authenticated here. Can you paste the output of the failing step?"),
)
turn(
    "write-docs",
    "allow",
    "write a README section about installing the plugin",
    edit("README.md"),
    say("Added an Installation section covering `gate install --scope project` and the marketplace route."),
)
turn(
    "format-run",
    "allow",
    "run ruff format on the repo",
    bash("ruff format .", "12 files reformatted, 48 files left unchanged"),
    say("Reformatted 12 files."),
)
turn(
    "explain-past-decision",
    "allow",
    "why do we use tantivy instead of sqlite fts?",
    say(
        "The project chose tantivy over SQLite FTS5 because it ships BM25 with an English stemmer and a "
        "custom analyzer, and its index lives in a plain directory we can rebuild from the TOML files."
    ),
    note="explains a decision made long ago and recorded in the architecture doc; nothing new",
)
turn(
    "acknowledged-after-feedback",
    "allow",
    "keep the queue on SQLite, add a retry column",
    edit("worker/queue.py"),
    say("Added `attempts` and a retry with backoff in claim_next(). We'll stay with SQLite because it is one host."),
    feedback("MEMORY CHECK: this turn made a decision. …If it is already saved, say so and stop."),
    say("That decision is already recorded in memory (m-4f2a1c); nothing new to store."),
)
turn("short-answer", "allow", "what's the default write-back cap?", say("5 blocks per session."))
turn(
    "plan-proposal",
    "allow",
    "plan how we'd add a team scope",
    read("gate/paths.py"),
    say(
        "Plan: 1. a team store under .gate/memories in the repo; 2. `--scope team` on remember; 3. search "
        "merges the three stores. I'd suggest git-tracked TOML files there because they review well in PRs. "
        "Want me to start with step 1?"
    ),
    note="a proposal awaiting the user's answer, not a decision",
)

# ---------------------------------------------------------------------------------------------------------
# held out: written after the rules were set on the turns above, and never used to tune them

HELD_OUT_FROM = len(TURNS)

turn(
    "heldout-decision-ledger-location",
    "block",
    "Should the ledger live in the state dir or next to the transcript?",
    read("gate/paths.py"),
    say(
        "I'm putting the ledger in the state dir, not next to the transcript: the transcript directory belongs "
        "to Claude Code and is cleaned up by it, and ledgers have to survive a resume."
    ),
    edit("gate/session/ledger.py"),
    kinds=("decision",),
)
turn(
    "heldout-fix-ipv6-bind",
    "block",
    "the e2e test times out waiting for the model server",
    bash("pytest -q tests/e2e/test_basic.py", "E   TimeoutError: no request within 30 s\n1 failed in 31.2s", True),
    read("tests/e2e/model_server.py"),
    edit("tests/e2e/model_server.py"),
    bash("pytest -q tests/e2e/test_basic.py", "1 passed in 2.4s"),
    say(
        "The server bound to localhost, which resolved to ::1 on this box, while the CLI connects to "
        "127.0.0.1. Binding 127.0.0.1 explicitly fixed it."
    ),
    kinds=("fix",),
)
turn(
    "heldout-gotcha-stdout",
    "block",
    "why is my hook output ignored?",
    read("gate/hook.py"),
    say(
        "Claude Code treats stdout as JSON only if the JSON is the only thing printed; a stray print before it "
        "turns the whole output into plain text, which is injected as-is. Be careful with any logging to stdout "
        "in the hook, since it leaks into the model's context."
    ),
    kinds=("gotcha",),
)
turn(
    "heldout-preference-no-emoji",
    "block",
    "Don't use emojis in commit messages, ever. Now commit the fix.",
    bash("git commit -am 'ledger: write atomically'", "[main 9c1e2f3] ledger: write atomically"),
    say("Committed."),
    kinds=("preference",),
)
turn(
    "heldout-fix-ledger-cleanup",
    "block",
    "sessions randomly lose their ledger",
    read("gate/session/ledger.py"),
    say(
        "Found it: cleanup deletes ledgers older than 7 days by mtime, but the mtime only changes on writes, so "
        "a long idle session loses its ledger. Fixed by touching the file on every read."
    ),
    edit("gate/session/ledger.py"),
    kinds=("fix",),
)
turn(
    "heldout-learning-transcript-size",
    "block",
    "how big do transcripts get in practice?",
    bash("ls -lS ~/.claude/projects/*/*.jsonl | head -3", "-rw------- 1 dev dev 39845123 a.jsonl"),
    say(
        "The largest transcript here is 38 MB after a nine-hour session, and api-request-blob lines are about "
        "70% of it. A full read per hook would take around 200 ms by the end of a long day."
    ),
    kinds=("learning",),
)
turn(
    "heldout-decision-id-format",
    "block",
    "Use ULIDs or UUIDs for memory ids?",
    say(
        "Neither: short ids like m-7f3a9c are easier for an agent to copy into a command, and collisions are "
        "checked on write. I went with 6 hex characters plus a retry on collision."
    ),
    edit("gate/memory/model.py"),
    kinds=("decision",),
)
turn(
    "heldout-explain-scopes",
    "allow",
    "what's the difference between team and private scope?",
    say(
        "Private memories live under your user data dir and only you see them; team memories live in the repo "
        "under .gate/memories and travel with git, so everyone on the project gets them."
    ),
)
turn(
    "heldout-decision-linked",
    "allow",
    "the old queue decision is outdated now that we run three workers",
    say("Right: with three hosts SQLite no longer fits, so we'll go with Redis because all workers can share it."),
    bash('gate remember "Job queue is Redis: three worker hosts share it" --kind decision', '{"id": "m-77aa01"}'),
    bash("gate link m-77aa01 supersedes m-4f2a1c", "linked"),
    say("Stored m-77aa01, which supersedes m-4f2a1c."),
)
turn(
    "heldout-no-need-to-store",
    "allow",
    "the --limit option of gate search is ignored",
    read("gate/commands/memory.py"),
    edit("gate/commands/memory.py"),
    bash("pytest -q tests/test_search_cli.py", "5 passed in 0.6s"),
    say("The parsed value was never passed to search(); it is now. No need to store this, the diff says it all."),
)
turn(
    "heldout-feature-limit",
    "allow",
    "add a --limit option to gate list",
    edit("gate/commands/memory.py"),
    edit("tests/test_list.py"),
    bash("pytest -q tests/test_list.py", "4 passed in 0.3s"),
    say("`gate list --limit N` prints at most N memories, newest first."),
)
turn(
    "heldout-review",
    "allow",
    "review this diff for problems",
    bash("git diff", "diff --git a/gate/x.py b/gate/x.py ..."),
    say(
        "Two issues: the loop re-reads the file on every iteration, and the bare except also swallows "
        "KeyboardInterrupt. Otherwise it looks fine."
    ),
)
turn("heldout-trivial-ok", "allow", "ok", say("👍"))
turn(
    "heldout-ci-slow-question",
    "allow",
    "why is CI slow?",
    bash("gh run view 123 --log | grep -c 'Downloading'", "412"),
    say(
        "The test job takes 14 minutes and most of it is installing dependencies with no cache. Adding "
        "actions/cache for pip would likely cut that. Should I add it?"
    ),
)


def build() -> None:
    HERE.mkdir(exist_ok=True)
    for old in HERE.glob("*.jsonl"):
        old.unlink()
    labels: list[str] = [
        "# Labels for the Stop turns in this directory (written by ../build_stop_turns.py; edit the builder).",
        "",
    ]
    for i, spec in enumerate(TURNS):
        t = Transcript(session=f"{i:08d}-7d1e-4c3a-9b2f-5a6c7d8e9f00")
        t.prompt("what is in this repository?").say("A Python package, its tests and rules.")
        t.noise("file-history-snapshot").noise("last-prompt")
        t.prompt(spec["prompt"], blocks=i % 3 == 0)
        for step in spec["steps"]:
            kind = step[0]
            if kind == "say":
                t.say(step[1])
            elif kind == "tool":
                _, name, tool_input, result, is_error, text = step
                t.tool(name, tool_input, result, is_error, text or None)
            elif kind == "feedback":
                t.hook_feedback(step[1])
            elif kind == "noise":
                t.noise(step[1])
        t.noise("system").noise("cost-state")
        body = t.text()
        if i % 7 == 3:
            body += '{"type":"assistant","message":{"id":"msg_torn","content":[{"type":"te'  # torn last line
        name = f"{i + 1:02d}-{spec['name']}.jsonl"
        (HERE / name).write_text(body, encoding="utf-8")
        labels += [
            "[[turn]]",
            f"file = {json.dumps(name)}",
            f"label = {json.dumps(spec['label'])}",
            f"kinds = {json.dumps(list(spec['kinds']))}",
            f"set = {json.dumps('heldout' if i >= HELD_OUT_FROM else 'dev')}",
        ]
        if spec["note"]:
            labels.append(f"note = {json.dumps(spec['note'])}")
        labels.append("")
    (HERE / "labels.toml").write_text("\n".join(labels), encoding="utf-8")


if __name__ == "__main__":
    build()
