"""`gate stats` and `gate trace` name a project as the store does: by its repository's id (gate/project_id.py),
so every worktree of a repository is one project and a moved checkout keeps its history; an audit record
written before records named the id is matched by its checkout path, so nothing logged earlier is lost.

Real git repositories in temp dirs, the real `gate` entry point and hook events fed to the hook in a fresh
process (as tests/test_project_identity.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import git

from gate.paths import ID_FILE, ProjectPaths, audit_log_file, error_log_file, project_key, user_dirs
from gate.session.carryover import carry_file

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "notes.md").write_text("ledger notes\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    main = make_repo(tmp_path / "main")
    side = tmp_path / "side"
    git(main, "worktree", "add", "-q", str(side), "-b", "side")
    return main, side


def gate_json(cwd: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "gate.cli", *args, "--json"], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def hook(project: Path, name: str, session: str, **fields: Any) -> None:
    event = {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": name, **fields}
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, env=dict(os.environ), cwd=project)
    assert proc.returncode == 0


def a_session(project: Path, session: str) -> None:
    hook(project, "SessionStart", session, source="startup")
    hook(project, "UserPromptSubmit", session, prompt="How are ledger exports scheduled each night?")


def write_log(path: str, records: list[dict[str, Any]]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)


def test_two_worktrees_of_one_repository_are_one_project_in_stats_and_trace(tmp_path: Path) -> None:
    main, side = with_worktree(tmp_path)
    a_session(main, "in-main")
    a_session(side, "in-side")
    key = ProjectPaths.for_cwd(main).key
    mine = [r for r in json.loads("[" + ",".join(Path(audit_log_file()).read_text().splitlines()) + "]")
            if r.get("session") in ("in-main", "in-side")]
    assert mine and {r.get("project_id") for r in mine} == {key}  # the record names the project
    assert {r.get("project") for r in mine} == {str(main.resolve()), str(side.resolve())}  # and its checkout

    for checkout in (main, side):
        report = gate_json(checkout, "stats")
        assert report["sessions"] == 2, checkout
        assert report["injection"]["gates"]["recall"]["prompts"] == 2
        assert report["filters"]["project"] == key
        assert report["filters"]["project_root"] == str(checkout.resolve())
    assert gate_json(main, "stats", "--all-projects")["sessions"] == 2
    # the project's last turn was the worktree's: trace in the main checkout finds it
    trace = gate_json(main, "trace")
    assert (trace["session"], trace["project"], trace["project_id"]) == ("in-side", str(side.resolve()), key)


def test_a_moved_checkout_keeps_its_stats(tmp_path: Path) -> None:
    before = make_repo(tmp_path / "before")
    a_session(before, "before-move")
    after = tmp_path / "elsewhere" / "after"
    after.parent.mkdir()
    shutil.move(str(before), str(after))
    a_session(after, "after-move")
    report = gate_json(after, "stats")
    assert report["sessions"] == 2
    assert report["injection"]["gates"]["recall"]["prompts"] == 2


def test_records_of_an_older_gate_are_matched_by_their_checkout_path(tmp_path: Path) -> None:
    """Records that name no project id: this checkout's, the repository's other worktree's and an earlier path of
    the project (an alias in its id file) count, as do records naming the project's id at any path; another
    project's path does not, nor does a record whose id names another project, even at this checkout's path (a
    directory reused by another repository)."""
    main, side = with_worktree(tmp_path)
    paths = ProjectPaths.for_cwd(main)
    old_place = str(tmp_path / "gone" / "main")
    id_file = main / ".git" / ID_FILE
    id_file.write_text(id_file.read_text() + f"alias = {old_place}\n")
    base = {"ts": "2026-12-01T09:00:00Z", "event": "UserPromptSubmit", "gate": "recall", "decision": "skipped",
            "reason": "SKIP_NO_HITS"}
    write_log(audit_log_file(), [
        {**base, "session": "old-main", "project": str(main.resolve())},
        {**base, "session": "old-side", "project": str(side.resolve())},
        {**base, "session": "old-place", "project": old_place},
        {**base, "session": "other", "project": str(tmp_path / "other")},
        {**base, "session": "reused", "project": str(main.resolve()), "project_id": "another-0123456789ab"},
        {**base, "session": "new-1", "project": str(tmp_path / "anywhere"), "project_id": paths.key},
        {**base, "session": "new-2", "project": str(tmp_path / "elsewhere"), "project_id": paths.key},
    ])
    report = gate_json(side, "stats")
    assert report["sessions"] == 5
    assert report["injection"]["gates"]["recall"]["prompts"] == 5
    assert gate_json(side, "stats", "--all-projects")["sessions"] == 7


def test_the_last_error_is_the_projects_whichever_checkout_wrote_it(tmp_path: Path) -> None:
    main, side = with_worktree(tmp_path)
    key = ProjectPaths.for_cwd(main).key
    line = {"event": "Stop", "error": "OSError"}
    write_log(error_log_file(), [
        {**line, "ts": "2026-12-01T09:00:00Z", "message": "main, older", "project": str(main.resolve())},
        {**line, "ts": "2026-12-01T09:05:00Z", "message": "side", "project": str(side.resolve()), "project_id": key},
        {**line, "ts": "2026-12-01T09:10:00Z", "message": "other", "project": str(tmp_path / "other")},
    ])
    assert gate_json(main, "stats")["health"]["last_error"]["message"] == "side"


def test_a_fail_open_names_the_project_id(tmp_path: Path) -> None:
    from gate.hook import _fail_open

    main, side = with_worktree(tmp_path)
    _fail_open("Stop", "broken", str(side), ValueError("boom"), time.perf_counter())
    key = ProjectPaths.for_cwd(main).key
    record = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert (record["decision"], record["project"], record["project_id"]) == ("failed_open", str(side.resolve()), key)
    error = json.loads(Path(error_log_file()).read_text().splitlines()[-1])
    assert error["project_id"] == key
    assert gate_json(main, "stats")["health"]["failed_open"] == 1


def test_mute_status_lists_the_muted_sessions_of_every_worktree(tmp_path: Path) -> None:
    main, side = with_worktree(tmp_path)
    hook(side, "SessionStart", "side-session", source="startup")
    proc = subprocess.run([sys.executable, "-m", "gate.cli", "mute", "--session", "side-session"], cwd=side,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert gate_json(main, "mute", "--status")["muted_sessions"] == ["side-session"]


def test_a_deferred_turn_kept_under_the_checkouts_old_name_joins_the_project(tmp_path: Path) -> None:
    """A deferral kept before projects were repositories (its carry file named by the checkout's path) still
    reaches the project's next session start after the migration."""
    main = make_repo(tmp_path / "main")
    root = str(main.resolve())
    old_key = project_key(root)
    Path(user_dirs().data, "projects", old_key, "memories").mkdir(parents=True)  # an old store: a migration is due
    old_paths = ProjectPaths(root, old_key, user_dirs())
    carry = Path(carry_file(old_paths))
    carry.parent.mkdir(parents=True)
    entry = {"at": time.time(), "turn": 3}
    carry.write_text(json.dumps({"deferred": {"s-old": entry}}), encoding="utf-8")
    paths = ProjectPaths.for_cwd(main)
    assert paths.key != old_key
    assert json.loads(Path(carry_file(paths)).read_text())["deferred"] == {"s-old": entry}
    assert not carry.exists()
