"""A project is its repository, in the real CLI: what is stored in the main checkout reaches a session that
Claude Code runs in a worktree of it (where `claude --worktree` puts one: `.claude/worktrees/NAME`), in the
checkout moved elsewhere, and in another repository that imported its export; `gate stats` counts the sessions
of the main checkout and of the worktree as one project's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli
from model_server import ModelServer, tail_text

pytestmark = pytest.mark.e2e

DIRECTIVE = "Always run the reserve reconciliation script before tagging a release"
DECISION = "Waterfall payments fill the reserve account before any distribution to noteholders"
PROMPT = "How does the payment waterfall fill the reserve account when the trigger fires?"
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV},
                   stdin=subprocess.DEVNULL)


def committed_and_stored(gate: GateCli, main: Path) -> tuple[str, str]:
    """The test's project as a repository with a commit, gate wired into it, a directive and a decision stored."""
    (main / "README.md").write_text("billing\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "first")
    gate.run("install", "--project", str(main))
    directive = gate.remember(DIRECTIVE, "--kind", "directive")
    decision = gate.remember(DECISION, "--kind", "decision", "--body", "The reserve trigger fires after 3 misses.")
    return directive, decision


def assert_delivered(claude: Claude, gate: GateCli, directive: str, decision: str) -> None:
    run = claude.run(PROMPT)
    shown = tail_text(run.turns[0].main_requests[0])
    assert directive in shown and DIRECTIVE in shown, "session start delivers the directive"
    assert decision in shown, "recall finds the decision"
    starts = [r for r in gate.audit() if r.get("event") == "SessionStart" and r.get("session") == run.session_id]
    assert starts and directive in starts[0].get("delivered", []), starts


def test_a_memory_of_the_main_checkout_reaches_a_session_in_a_worktree(
    claude: Claude, gate: GateCli, e2e_dirs: E2EDirs, model_server: ModelServer
) -> None:
    main = e2e_dirs.project
    directive, decision = committed_and_stored(gate, main)
    worktree = main / ".claude" / "worktrees" / "review"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "review")
    gate.run("install", "--project", str(worktree))
    claude.project = worktree  # the session runs in the worktree, as `claude --worktree review` runs it
    assert_delivered(claude, gate, directive, decision)

    # a session in the main checkout too: `gate stats` counts both as one project's, from either checkout
    claude.project = main
    claude.run(PROMPT)
    sessions = {r.get("session") for r in gate.audit() if r.get("event") == "SessionStart"}
    assert len(sessions) == 2, sessions
    for checkout in (main, worktree):
        report = gate.json("stats", "--project", str(checkout))
        assert report["sessions"] == 2, (checkout, report["filters"])
        assert report["filters"]["project_root"] == str(checkout.resolve())
    assert len({r.get("project_id") for r in gate.audit() if r.get("session") in sessions}) == 1


def test_a_moved_checkout_keeps_its_memories_in_the_cli(
    claude: Claude, gate: GateCli, e2e_dirs: E2EDirs, model_server: ModelServer
) -> None:
    directive, decision = committed_and_stored(gate, e2e_dirs.project)
    moved = e2e_dirs.root / "renamed" / "billing"
    moved.parent.mkdir()
    e2e_dirs.project.rename(moved)  # its .claude/settings.json goes with it
    claude.project = moved
    assert_delivered(claude, gate, directive, decision)


def test_an_imported_export_is_delivered_in_the_importing_repository(
    claude: Claude, gate: GateCli, e2e_dirs: E2EDirs, model_server: ModelServer
) -> None:
    directive, decision = committed_and_stored(gate, e2e_dirs.project)
    exported = gate.run("export").stdout
    other = e2e_dirs.root / "other-clone"
    other.mkdir()
    git(other, "init", "-q")
    gate.run("import", "-", "--project", str(other), stdin=exported)
    gate.run("install", "--project", str(other))
    claude.project = other
    assert_delivered(claude, gate, directive, decision)
