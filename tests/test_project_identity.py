"""A project is its repository: every worktree of one repository, a moved or renamed checkout and an import
find the same private memories; stores named the old way (by a checkout's path) join on first use.

Real git repositories in temp dirs (`git init`, a commit, `git worktree add`), the real `gate` entry point
and hook events fed to the hook in a fresh process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import git

from gate.memory.model import Memory
from gate.memory.store.store import Store
from gate.paths import ID_FILE, ProjectPaths, git_common_dir, project_key, user_dirs

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "ledger.py").write_text("ROUNDING = 'half-even'\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def gate(project: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gate.cli", *args, "--project", str(project)], input=stdin,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))


def remember(project: Path, title: str, *args: str) -> str:
    proc = gate(project, "remember", title, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def found(project: Path, *terms: str) -> list[str]:
    proc = gate(project, "search", *terms, "--json")
    assert proc.returncode == 0, proc.stderr
    return [hit["id"] for hit in json.loads(proc.stdout)["hits"]]


def hook(project: Path, name: str, session: str, **fields: Any) -> str:
    """The additionalContext the hook answers an event in `project` with ('' when none)."""
    event = {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": name, **fields}
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, env=dict(os.environ), cwd=project)
    assert proc.returncode == 0
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else ""


def session_start(project: Path, session: str) -> str:
    return hook(project, "SessionStart", session, source="startup")


def read_file(project: Path, session: str, relative: str) -> str:
    return hook(project, "PreToolUse", session, tool_name="Read", tool_input={"file_path": str(project / relative)})


# --- identification ----------------------------------------------------------------------------------------------


def test_the_common_dir_is_read_without_git_as_git_answers_it(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "side"), "-b", "side")
    for checkout in (main, tmp_path / "side"):
        expected = Path(git(checkout, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
        assert git_common_dir(str(checkout.resolve())) == str(expected)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_common_dir(str(plain)) is None


def test_every_worktree_is_one_project_and_its_id_lives_in_the_repository(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "side"), "-b", "side")
    nested = main / ".claude" / "worktrees" / "agent-1"  # where `claude --worktree` puts its sessions
    git(main, "worktree", "add", "-q", str(nested), "-b", "agent-1")
    ids = {ProjectPaths.for_cwd(p).key for p in (main, main / "src", tmp_path / "side", nested)}
    assert len(ids) == 1
    (key,) = ids
    assert key.startswith("main-")
    assert f"id = {key}" in (main / ".git" / ID_FILE).read_text()
    side = ProjectPaths.for_cwd(tmp_path / "side")
    assert side.root == str((tmp_path / "side").resolve())  # anchors and the team store stay the checkout's
    assert side.how == "repository" and side.repository == str((main / ".git").resolve())


def test_a_directory_outside_any_repository_is_its_own_project(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    paths = ProjectPaths.for_cwd(notes)
    assert (paths.how, paths.key, paths.repository) == ("directory", project_key(str(notes.resolve())), None)
    assert ProjectPaths.for_cwd(notes / "sub").key != paths.key  # one rule: the directory gate runs in


def test_two_clones_of_one_repository_are_two_projects(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    git(tmp_path, "clone", "-q", str(origin), "copy")
    assert ProjectPaths.for_cwd(origin).key != ProjectPaths.for_cwd(tmp_path / "copy").key


# --- worktree, move ----------------------------------------------------------------------------------------------


def test_a_memory_stored_in_the_main_checkout_is_delivered_in_a_worktree(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    fact = remember(main, "Ledger rounding must stay half-even for invoices", "--kind", "gotcha",
                    "--path", "src/ledger.py")
    rule = remember(main, "Run the ledger tests before every commit", "--kind", "directive")
    worktree = tmp_path / "side"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "side")

    assert fact in found(worktree, "ledger", "rounding")
    assert rule in session_start(worktree, "wt-1")
    assert fact in read_file(worktree, "wt-2", "src/ledger.py")  # the anchor is relative to the checkout
    assert gate(worktree, "verify").returncode == 0  # and its file is the worktree's own copy

    # what the worktree stores is the main checkout's too, and stays when the worktree is removed
    mine = remember(worktree, "The side branch renames the ledger module later on")
    git(main, "worktree", "remove", str(worktree))
    assert mine in found(main, "ledger", "module", "renames")


def test_a_moved_checkout_keeps_its_memories(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "before")
    fact = remember(repo, "Invoice numbers come from the ledger service", "--path", "src/ledger.py",
                    "--kind", "gotcha")
    moved = tmp_path / "elsewhere" / "after"
    moved.parent.mkdir()
    shutil.move(str(repo), str(moved))
    assert fact in found(moved, "invoice", "numbers")
    assert fact in read_file(moved, "moved-1", "src/ledger.py")


# --- import ------------------------------------------------------------------------------------------------------


def test_an_import_is_the_importing_projects_unless_told_to_keep_the_source(tmp_path: Path) -> None:
    here = make_repo(tmp_path / "here")
    there = make_repo(tmp_path / "there")
    fact = remember(here, "The staging database is reset every Sunday night")
    exported = gate(here, "export").stdout
    assert ProjectPaths.for_cwd(here).key in exported

    proc = gate(there, "import", "-", stdin=exported)
    assert proc.returncode == 0, proc.stderr
    assert fact in found(there, "staging", "database", "reset")
    assert Store.for_cwd(str(there)).get(fact).project == ProjectPaths.for_cwd(there).key
    again = gate(there, "import", "-", "--json", stdin=exported)  # the same export again: nothing changes
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == [fact], again.stdout

    elsewhere = make_repo(tmp_path / "elsewhere")
    proc = gate(elsewhere, "import", "-", "--keep-project", stdin=exported)
    assert proc.returncode == 0, proc.stderr
    assert Store.for_cwd(str(elsewhere)).get(fact).project == ProjectPaths.for_cwd(here).key
    assert fact not in found(elsewhere, "staging", "database", "reset")  # another project's memory, as asked


# --- migration ---------------------------------------------------------------------------------------------------


def old_store(checkout: Path, title: str, **fields: Any) -> tuple[str, Path]:
    """A private memory as gate wrote it before projects were repositories: under the checkout's path key,
    naming the path in its `project` field. (id, its file)"""
    root = str(checkout.resolve())
    paths = ProjectPaths(root=root, key=project_key(root), dirs=user_dirs())
    store = Store(paths)
    memory = store.remember(Memory(id=store.fresh_id(), kind="finding", title=title, project=root, **fields))
    return memory.id, Path(paths.private_store) / f"{memory.id}.toml"


def test_an_old_store_joins_the_repository_on_first_use_and_loses_nothing(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    worktree = tmp_path / "side"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "side")
    first, first_file = old_store(main, "Ledger exports run nightly at two", paths=["src/ledger.py"])
    before = Store(ProjectPaths(str(main.resolve()), project_key(str(main.resolve())), user_dirs()))
    before.update(before.get(first))  # one saved version in its history
    second, _ = old_store(worktree, "Side branch ledger exports are disabled")
    written = first_file.read_bytes()
    projects = Path(user_dirs().data, "projects")
    assert (projects / project_key(str(main.resolve()))).is_dir()
    assert not (main / ".git" / ID_FILE).exists()

    paths = ProjectPaths.for_cwd(main)  # the first use: no step of the user's
    assert paths.key != project_key(str(main.resolve()))
    assert not (projects / project_key(str(main.resolve()))).exists()  # moved, not copied
    assert not (projects / project_key(str(worktree.resolve()))).exists()  # the worktree's too (the scan)
    moved = Path(paths.private_store, first_file.name)
    assert moved.read_bytes() == written  # not rewritten: its old path is an alias of the project
    assert str(main.resolve()) in paths.aliases and str(worktree.resolve()) in paths.aliases
    assert [v.number for v in Store(paths).versions(first)[1]] == [1]  # its history came along

    for checkout in (main, worktree):
        assert {first, second} <= set(found(checkout, "ledger", "exports", "--all"))


def test_an_old_store_of_a_checkout_used_later_joins_then(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    ProjectPaths.for_cwd(main)  # the repository has its id already
    worktree = tmp_path / "late"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "late")
    late, _ = old_store(worktree, "Late worktree notes about the ledger cache")
    out = hook(worktree, "UserPromptSubmit", "late-1", prompt="How does the ledger cache behave?")
    assert late in found(main, "ledger", "cache") and late in out


def test_removed_claude_code_worktrees_leave_nothing_behind(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    agent = main / ".claude" / "worktrees" / "agent-7"
    git(main, "worktree", "add", "-q", str(agent), "-b", "agent-7")
    stranded, _ = old_store(agent, "Agent worktree found the ledger lock timeout")
    git(main, "worktree", "remove", "--force", str(agent))
    assert stranded in found(main, "ledger", "lock", "timeout")


def test_a_memory_in_both_stores_is_kept_once_and_a_differing_one_is_left_aside(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    worktree = tmp_path / "side"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "side")
    same, same_file = old_store(main, "Shared fact about the ledger locks")
    other_file = Path(ProjectPaths(str(worktree.resolve()), project_key(str(worktree.resolve())), user_dirs())
                      .private_store, same_file.name)
    other_file.parent.mkdir(parents=True)
    shutil.copyfile(same_file, other_file)
    differing, differing_file = old_store(main, "Ledger batch size is five hundred")
    changed = Path(other_file.parent, differing_file.name)
    changed.write_text(differing_file.read_text().replace("five hundred", "one thousand"))

    paths = ProjectPaths.for_cwd(main)
    assert Path(paths.private_store, same_file.name).is_file()
    assert "five hundred" in Path(paths.private_store, differing_file.name).read_text()
    left = list(Path(user_dirs().data, "projects").glob("*.unmerged"))
    assert len(left) == 1 and (left[0] / "memories" / changed.name).read_text().count("one thousand") == 1
    assert not (left[0] / "memories" / same_file.name).exists()  # the same bytes: a duplicate, dropped
    report = gate(main, "doctor", "--no-run")
    assert str(left[0]) in report.stdout


def test_the_hook_moves_nothing_where_there_is_nothing_to_move(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    ProjectPaths.for_cwd(main)
    code = ("import sys; from gate.paths import ProjectPaths; ProjectPaths.for_cwd(sys.argv[1]); "
            "print('gate.project_migrate' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(main)], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


# --- doctor ------------------------------------------------------------------------------------------------------


def test_doctor_names_the_project_and_how_it_was_identified(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    key = ProjectPaths.for_cwd(main).key
    proc = gate(main, "doctor", "--no-run", "--json")
    report = json.loads(proc.stdout)
    assert (report["project_id"], report["identified_by"]) == (key, "repository")
    text = gate(main, "doctor", "--no-run").stdout
    assert f"project {key}, identified by the repository {main.resolve()}" in text
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "identified by the directory (not in a git repository)" in gate(plain, "doctor", "--no-run").stdout


def test_a_migration_that_cannot_finish_loses_nothing_and_the_hook_says_why(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    key = ProjectPaths.for_cwd(main).key
    target = Path(user_dirs().data, "projects", key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("in the way")  # the project's store cannot be made: the move must fail
    kept, kept_file = old_store(main, "Ledger snapshots are kept for ninety days")
    written = kept_file.read_bytes()

    out = hook(main, "UserPromptSubmit", "stuck-1", prompt="How long are ledger snapshots kept?")
    assert out == "" or kept not in out  # the gates went on (exit 0 asserted), without the stranded store
    assert kept_file.read_bytes() == written  # still where it was, whole
    errors = Path(user_dirs().log, "errors.log").read_text()
    assert '"kind":"migration"' in errors.replace(" ", "") and "FileExistsError" in errors

    target.unlink()  # the obstacle gone, the next call finishes the move
    assert kept in found(main, "ledger", "snapshots", "kept")


def test_a_checkout_moved_before_this_version_gets_its_store_back_by_an_alias(tmp_path: Path) -> None:
    before = make_repo(tmp_path / "before")
    lost, _ = old_store(before, "Ledger archive runs on the first of the month")
    after = tmp_path / "after"
    shutil.move(str(before), str(after))  # moved while gate still named stores by path
    assert lost not in found(after, "ledger", "archive")  # nothing names the old path as this repository's
    id_file = after / ".git" / ID_FILE
    id_file.write_text(id_file.read_text() + f"alias = {before.resolve()}\n")  # docs/troubleshooting.md
    assert lost in found(after, "ledger", "archive")
    assert not Path(user_dirs().data, "projects", project_key(str(before.resolve()))).exists()


def test_hooks_racing_on_a_repositorys_first_use_agree_and_lose_nothing(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    worktree = tmp_path / "side"
    git(main, "worktree", "add", "-q", str(worktree), "-b", "side")
    mine = [old_store(main, f"Ledger fact number {n} about reconciliation")[0] for n in range(5)]
    theirs = [old_store(worktree, f"Side fact number {n} about reconciliation")[0] for n in range(5)]
    code = ("import sys; from gate.paths import ProjectPaths; p = ProjectPaths.for_cwd(sys.argv[1]); "
            "print(p.key, p.migration_error)")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(main if n % 2 else worktree)], stdout=subprocess.PIPE,
                              text=True, env=dict(os.environ)) for n in range(8)]
    answers = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert len(answers) == 1 and next(iter(answers)).endswith(" None"), answers
    paths = ProjectPaths.for_cwd(main)
    store = {p.stem for p in Path(paths.private_store).glob("*.toml")}
    assert set(mine + theirs) <= store
    assert not list(Path(user_dirs().data, "projects").glob("*.unmerged"))


def test_an_id_file_that_cannot_be_read_names_the_project_by_the_main_checkouts_path(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    (main / ".git" / ID_FILE).mkdir()  # in the way: neither readable as a file nor writable
    git(main, "worktree", "add", "-q", str(tmp_path / "side"), "-b", "side")
    paths = ProjectPaths.for_cwd(tmp_path / "side")
    assert (paths.how, paths.key) == ("repository path", project_key(str(main.resolve())))  # still one project
    assert "could not be read or written" in gate(main, "doctor", "--no-run").stdout
