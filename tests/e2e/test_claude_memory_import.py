"""Coming from Claude Code's memory (issue 16), in the real CLI: gate finds the auto-memory directory the CLI
itself loads, and a memory imported from it reaches the next session's start as a directive."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from auto_memory_sample import write_sample
from claude_harness import Claude, E2EDirs, GateCli, hook_contexts
from model_server import request_text
from test_scenarios import audit, first_shown, wired  # noqa: F401 (wired is a fixture)

from gate.claude_code import auto_memory_dir, project_key
from gate.paths import project_root

pytestmark = pytest.mark.e2e

MARKER = "INDEX-MARKER-7c41"


def _git(*args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], check=True, capture_output=True, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("layout", ["subdirectory", "linked worktree", "autoMemoryDirectory setting"])
def test_gate_finds_the_directory_the_cli_loads(
    layout: str, claude: Claude, e2e_dirs: E2EDirs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(e2e_dirs.home))  # the CLI's HOME, for gate's lookup in this process
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_REMOTE_MEMORY_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"):
        monkeypatch.delenv(name, raising=False)
    project = e2e_dirs.project.resolve()
    expected = e2e_dirs.home / ".claude" / "projects" / project_key(str(project)) / "memory"
    cwd = project / "src" / "app"
    cwd.mkdir(parents=True)
    if layout == "linked worktree":
        _git("-C", str(project), "commit", "-q", "--allow-empty", "-m", "start")
        cwd = e2e_dirs.root.resolve() / "worktree"
        _git("-C", str(project), "worktree", "add", "-q", str(cwd))
    elif layout == "autoMemoryDirectory setting":
        settings = project / ".claude" / "settings.local.json"
        settings.parent.mkdir()
        settings.write_text(json.dumps({"autoMemoryDirectory": "~/notes/claude-memory"}), encoding="utf-8")
        expected = e2e_dirs.home / "notes" / "claude-memory"
    located = auto_memory_dir(Path(project_root(cwd)))  # as `gate import` runs it in the session's cwd
    assert located.path == expected, located
    located.path.mkdir(parents=True)
    (located.path / "MEMORY.md").write_text(f"- [Marker](marker.md) — {MARKER}\n", encoding="utf-8")
    claude.project = cwd
    run = claude.run("hello")
    assert MARKER in request_text(run.turns[0].main_requests[0]), f"the CLI did not load {located.path}"


def test_imported_auto_memory_reaches_the_next_session_start(
    claude: Claude, wired: GateCli, e2e_dirs: E2EDirs  # noqa: F811
) -> None:
    key = project_key(str(e2e_dirs.project.resolve()))  # held to the CLI by the test above
    directory = write_sample(e2e_dirs.home / ".claude" / "projects" / key / "memory")
    report = wired.json("import", "--from", "claude-memory")
    items = {item["source"]: item for item in report["items"]}
    assert str(directory) in report["from"] and report["refused"] == 0
    directive = items["feedback_testing.md"]
    assert (directive["kind"], directive["scope"], directive["status"]) == ("directive", "private", "imported")

    run = claude.run("Add a test for the refund endpoint.")
    shown = first_shown(run.turns[0])
    assert "Real database in integration tests" in request_text(run.turns[0].main_requests[0])  # Claude's index
    (context,) = hook_contexts(run.transcript(), "SessionStart")
    for text in (context, shown):
        assert directive["id"] in text and "Integration tests must hit a real database, not mocks" in text
        assert items["team/changelog.md"]["id"] in text  # the other directive
        # a decision: not delivered at start, only listed in the index (issue 21); recall brings it in full
        assert f"{items['project_auth.md']['id']} · decision" in text
    (start,) = audit(wired, "SessionStart", run.session_id)
    assert start["decision"] == "fired"
    preferences = {item["id"] for item in items.values() if item["kind"] == "preference"}  # standing too
    assert preferences and set(start["delivered"]) == {directive["id"], items["team/changelog.md"]["id"]} | preferences
    assert items["project_auth.md"]["id"] in start["indexed"]

    again = wired.json("import", "--from", "claude-memory")
    assert again["imported"] == 0 and again["exists"] == len(items)
