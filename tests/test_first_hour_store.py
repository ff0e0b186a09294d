"""The first hour with the store (issue 23): each defect a new user met writing, importing and restoring memories,
as a test that failed before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.memory.model import Memory
from gate.memory.store.files import write_memory
from gate.memory.store.store import Store
from gate.paths import ProjectPaths


def run_hook(event: dict[str, Any]) -> tuple[str, int]:
    """The real hook entry point in a fresh process, as Claude Code runs it: (stdout, exit status)."""
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, env=dict(os.environ))
    return proc.stdout.decode(), proc.returncode


def stored(project: Path, memory_id: str) -> Memory:
    return Store.for_cwd(str(project)).get(memory_id)


def read_event(project: Path, session: str, file_path: str) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
            "hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": file_path}}


def delivered(project: Path, session: str, file_path: str) -> str:
    """The additionalContext a Read of `file_path` is answered with ('' when none)."""
    out, code = run_hook(read_event(project, session, file_path))
    assert code == 0
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


@pytest.fixture
def billing(project: Path) -> Path:
    (project / "billing").mkdir()
    (project / "billing" / "invoice.py").write_text("TZ = 'UTC'\n")
    (project / "README.md").write_text("readme\n")
    return project


# --- 1. paths are stored relative to the project root, whatever form they were typed in -----------------------------
def test_an_absolute_path_inside_the_project_is_stored_relative_and_fires(gate, billing: Path) -> None:
    absolute = str(billing.resolve() / "billing" / "invoice.py")
    code, out, err = gate("remember", "Invoice module has a timezone trap", "--kind", "gotcha", "--path", absolute)
    assert code == 0, err
    gotcha = out.strip()
    code, out, err = gate("remember", "Invoice rounding happens per line item", "--kind", "finding",
                          "--on", f"path:{billing.resolve()}/billing/**,expires:+30d")
    assert code == 0, err
    cued = out.strip()

    memory = stored(billing, gotcha)
    assert memory.paths == ["billing/invoice.py"]
    assert list(memory.anchors) == ["billing/invoice.py"]  # hashed, so `gate verify` checks it
    assert stored(billing, cued).triggers[0].startswith("path:billing/**,expires:")

    text = delivered(billing, "abs-1", absolute)  # agents read files by their absolute path
    assert gotcha in text and cued in text and "timezone trap" in text
    assert delivered(billing, "rel-1", "billing/invoice.py").count("timezone trap") == 1
    assert delivered(billing, "other", str(billing / "README.md")) == ""


def test_a_path_through_a_symlink_to_the_project_is_stored_relative(gate, billing: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-project"
    link.symlink_to(billing, target_is_directory=True)
    code, out, err = gate("remember", "Invoice module has a timezone trap", "--kind", "gotcha",
                          "--path", str(link / "billing" / "invoice.py"))
    assert code == 0, err
    assert stored(billing, out.strip()).paths == ["billing/invoice.py"]
    assert out.strip() in delivered(billing, "link-1", str(link / "billing" / "invoice.py"))


def test_a_path_relative_to_a_subdirectory_is_resolved_against_the_cwd(
    gate, billing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(billing / "billing")
    code, out, err = gate("remember", "Invoice module has a timezone trap", "--kind", "gotcha",
                          "--path", "invoice.py", "--on", "path:*.py", "--on", "path:../README.md")
    assert code == 0, err
    memory = stored(billing, out.strip())
    assert memory.paths == ["billing/invoice.py"]
    assert memory.triggers == ["path:billing/*.py", "path:README.md"]  # the glob keeps its pattern
    assert out.strip() in delivered(billing, "sub-1", str(billing / "billing" / "invoice.py"))


def test_without_a_cwd_in_the_project_a_relative_path_is_relative_to_its_root(gate, billing: Path) -> None:
    """`--project DIR` from elsewhere (the fixture's cwd is outside the project): the root is the base."""
    code, out, err = gate("remember", "Invoice module has a timezone trap", "--path", "billing/invoice.py")
    assert code == 0, err
    assert stored(billing, out.strip()).paths == ["billing/invoice.py"]


@pytest.mark.parametrize("args", [
    ["--path", "/etc/passwd"],
    ["--on", "path:/etc/**"],
    ["--path", "../elsewhere/app.py"],
    ["--path", "/*/passwd"],  # a wildcard right after the root: still the file system's root, not the cwd
])
def test_a_path_outside_the_project_is_refused_with_a_hint(
    args: list[str], gate, billing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(billing)
    code, out, err = gate("remember", "System accounts live in the password file", *args)
    assert code == 2, (out, err)
    assert "project (" in err and "nothing was written" in err and "passwd" not in err
    assert "hint: anchor a memory to a file of this project" in err
    assert Store.for_cwd(str(billing)).memories() == []


def test_import_and_edit_make_absolute_paths_relative_and_verify_names_one_that_never_fires(
    gate, billing: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = billing.resolve()
    lines = [
        {"id": "m-abs001", "kind": "gotcha", "title": "Invoice module has a timezone trap",
         "paths": [f"{root}/billing/invoice.py"], "triggers": [f"path:{root}/billing/*.py"]},
        {"id": "m-out001", "kind": "gotcha", "title": "System accounts live in the password file",
         "paths": ["/etc/passwd"]},
    ]
    code, out, err = gate("import", "-", "--skip-refused", "--json", stdin="\n".join(json.dumps(x) for x in lines))
    report = json.loads(out)
    assert report["ids"] == ["m-abs001"]
    assert [s["line"] for s in report["skipped"]] == [2] and "outside the project" in report["skipped"][0]["error"]
    memory = stored(billing, "m-abs001")
    assert (memory.paths, memory.triggers) == (["billing/invoice.py"], ["path:billing/*.py"])

    # A memory an older version stored with the absolute path as typed: verify names it, an edit repairs it.
    legacy = Memory(id="m-legacy", kind="gotcha", title="Invoice totals round half even",
                    paths=[f"{root}/billing/invoice.py"], project=str(root))
    write_memory(ProjectPaths.for_cwd(str(billing)).private_store, legacy, private=True)
    code, out, err = gate("verify")
    assert code == 1, (out, err)
    assert "never fires: --path " + f"{root}/billing/invoice.py" in out and "gate edit m-legacy" in out
    monkeypatch.setenv("EDITOR", "true")  # saved as it is: the edit stores the path relative
    code, out, err = gate("edit", "m-legacy")
    assert code == 0 and "updated m-legacy" in out, err
    repaired = stored(billing, "m-legacy")
    assert repaired.paths == ["billing/invoice.py"] and list(repaired.anchors) == ["billing/invoice.py"]
    assert gate("verify")[0] == 0


def test_an_old_memory_with_a_path_outside_the_project_can_still_be_edited_and_forgotten(
    gate, billing: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tempfile

    kept_in = tmp_path / "tmpdir"  # where the refused edit's text is kept: the test's own, not the machine's $TMPDIR
    kept_in.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(kept_in))
    legacy = Memory(id="m-outside", kind="gotcha", title="System accounts live in the password file",
                    paths=["/etc/passwd"], project=str(billing.resolve()))
    write_memory(ProjectPaths.for_cwd(str(billing)).private_store, legacy, private=True)
    code, out, _ = gate("verify")
    assert code == 1 and "never fires: --path /etc/passwd" in out
    assert gate("edit", "m-outside", "--cues", "where are the accounts")[0] == 0
    script = billing / "editor.sh"  # an edit of the title keeps the old path; a new one outside is refused
    script.write_text('#!/bin/sh\nsed -i "s/live in/are listed in/" "$1"\n')
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    code, out, err = gate("edit", "m-outside")
    assert code == 0 and "updated m-outside" in out, err
    assert stored(billing, "m-outside").paths == ["/etc/passwd"]
    script.write_text('#!/bin/sh\nsed -i "s#/etc/passwd#/etc/shadow#" "$1"\n')
    code, out, err = gate("edit", "m-outside")
    assert code == 2 and "outside the project" in err and "nothing changed" in err
    (kept,) = kept_in.iterdir()  # the refused text is kept where the message says, nothing lost
    assert f"your text is kept in {kept}" in err and "/etc/shadow" in kept.read_text()
    assert gate("forget", "m-outside")[0] == 0
    assert stored(billing, "m-outside").status == "forgotten"


# --- 2. a team memory's file names no machine path ----------------------------------------------------------------
def start_event(project: Path, session: str) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
            "hook_event_name": "SessionStart", "source": "startup"}


def test_a_team_memory_file_names_no_machine_path_and_works_in_any_checkout(
    gate, billing: Path, tmp_path: Path, isolated_home: Path
) -> None:
    code, out, err = gate("remember", "Deploys need approval from the release manager", "--kind", "directive",
                          "--scope", "team")
    assert code == 0, err
    rule = out.strip()
    code, out, err = gate("remember", "Invoice numbers are allocated by the ledger service", "--scope", "team",
                          "--kind", "gotcha", "--body", "never by the API", "--path", "billing/invoice.py")
    assert code == 0, err
    fact = out.strip()
    assert gate("edit", fact, "--add-cues", "who numbers invoices")[0] == 0  # a rewrite keeps it so
    for memory_id in (rule, fact):
        text = (billing / ".gate" / "memories" / f"{memory_id}.toml").read_text()
        for machine in (str(billing), str(billing.resolve()), str(tmp_path), str(isolated_home), str(Path.home())):
            assert machine not in text, (memory_id, machine)
        assert 'project = ""' in text

    # A teammate's clone lies elsewhere: the team memories are that checkout's own.
    clone = tmp_path / "elsewhere" / "clone"
    clone.mkdir(parents=True)
    (clone / ".git").mkdir()
    (clone / "billing").mkdir()
    (clone / "billing" / "invoice.py").write_text("TZ = 'UTC'\n")
    for name in (rule, fact):
        (clone / ".gate" / "memories").mkdir(parents=True, exist_ok=True)
        source = billing / ".gate" / "memories" / f"{name}.toml"
        (clone / ".gate" / "memories" / source.name).write_bytes(source.read_bytes())
    code, out, err = gate("search", "invoice", "numbers", "allocated", "--project", str(clone))
    assert code == 0 and fact in out, (out, err)
    out, code = run_hook(start_event(clone, "clone-1"))
    assert code == 0 and rule in out and "release manager" in out
    assert fact in delivered(clone, "clone-2", str(clone / "billing" / "invoice.py"))
    assert gate("verify", "--project", str(clone))[0] == 0  # the anchors are the clone's files

    # A private memory still records its project (the repository's id): the cross-project filters need it.
    code, out, _ = gate("remember", "Local notes stay on this machine only")
    assert stored(billing, out.strip()).project == ProjectPaths.for_cwd(billing).key


def test_a_team_file_written_with_an_absolute_project_is_still_read_and_loses_it_on_the_next_write(
    gate, billing: Path
) -> None:
    legacy = Memory(id="m-oldteam", kind="directive", title="Open a pull request for every change",
                    scope="team", project="/elsewhere/checkout/my-project")
    write_memory(ProjectPaths.for_cwd(str(billing)).team_store, legacy, private=False)
    path = billing / ".gate" / "memories" / "m-oldteam.toml"
    assert "/elsewhere/checkout" in path.read_text()
    code, out, err = gate("search", "pull", "request", "change")
    assert code == 0 and "m-oldteam" in out, (out, err)
    out, code = run_hook(start_event(billing, "legacy-1"))
    assert code == 0 and "m-oldteam" in out
    assert gate("edit", "m-oldteam", "--cues", "review before merge")[0] == 0
    assert "/elsewhere/checkout" not in path.read_text()
    assert stored(billing, "m-oldteam").cues == "review before merge"


# --- 3. the MEMORY CHECK template copied as it is, placeholders and all --------------------------------------------
def writeback_template() -> str:
    """The store command the write-back block shows, as rendered for a fix (rules/messages.toml)."""
    from gate.rules import load_rules

    messages = load_rules("messages")["writeback"]
    link_hint = messages["link_hint"].format(edge="fixes")
    return messages["command"].format(gate="gate", kind="fix", link_hint=link_hint)


@pytest.mark.parametrize("args", [
    ["<one-line fact>", "--kind", "fix", "--body", "<why, where, how to verify>"],
    ["Fixed the invoice timezone bug", "--body", "<why, where, how to verify>"],
    ["Fixed the invoice timezone bug", "--cues", "<how it would be asked>"],
    ["<one-line fact>: invoice dates drift a day"],
    ["<the fact goes here>"],
])
def test_a_copied_placeholder_is_refused_as_no_fact(args: list[str], gate, project: Path) -> None:
    code, out, err = gate("remember", *args)
    assert code == 2, (out, err)
    assert "placeholder" in err and "write the fact itself" in err and "nothing was written" in err
    assert Store.for_cwd(str(project)).memories() == []


def test_the_template_as_the_block_renders_it_is_refused_and_its_link_placeholder_gets_a_hint(
    gate, project: Path
) -> None:
    import shlex

    argv = shlex.split(writeback_template())
    assert argv[:2] == ["gate", "remember"] and "--link" in argv and "fixes:<ID>" in argv
    code, _, err = gate(*argv[1:])
    assert code == 2 and "the title holds the template's placeholder '<one-line fact>'" in err

    code, _, err = gate("remember", "Fixed the invoice timezone bug", "--kind", "fix", "--link", "fixes:<ID>")
    assert code == 2 and "is a placeholder, not a memory id" in err and "gate search" in err, err
    code, _, err = gate("remember", "Fixed the invoice timezone bug", "--supersedes", "OLD_ID")
    assert code == 2 and "is a placeholder, not a memory id" in err, err
    assert Store.for_cwd(str(project)).memories() == []

    # Angle brackets in a real fact are no placeholder.
    code, out, err = gate("remember", "Templates must close every <div> they open", "--body",
                          "Vec<u8> buffers are flushed at <EOF>; see base.html")
    assert code == 0, err


# --- 4. a corrupt memory file: its history is listed, and a restore keeps the broken bytes ---------------------------
def test_a_corrupt_file_still_shows_its_history_and_a_restore_keeps_the_broken_bytes(gate, project: Path) -> None:
    code, out, err = gate("remember", "Ledger exports run nightly at two")
    assert code == 0, err
    memory_id = out.strip()
    assert gate("edit", memory_id, "--cues", "when does the export run")[0] == 0
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert path is not None
    broken = path.read_bytes() + b'title = "an edit cut off half-way\n'
    path.write_bytes(broken)

    code, out, err = gate("show", "--history", memory_id)
    assert code == 0, err
    assert "@1 · replaced" in out and "by cues" in out
    assert "now · unreadable: not valid TOML" in out and f"gate restore {memory_id}@N" in out
    code, out, err = gate("show", "--history", memory_id, "--json")
    assert code == 0, err
    history = json.loads(out)
    assert history["current"] is None and history["unreadable"].startswith("not valid TOML")
    assert [v["version"] for v in history["versions"]] == [1]

    code, out, err = gate("restore", f"{memory_id}@1")
    assert code == 0, err
    kept = out.split("the unreadable file it replaced is kept at ", 1)[1].strip()
    assert Path(kept).read_bytes() == broken  # the bytes as they were, outside the store
    assert not Path(kept).is_relative_to(project)
    assert stored(project, memory_id).cues == ""  # version 1: before the cues were set
    code, out, err = gate("show", "--history", memory_id, "--json")
    assert json.loads(out)["kept_unreadable"] == [kept]
    assert json.loads(out)["current"]["title"] == "Ledger exports run nightly at two"
    code, out, _ = gate("show", "--history", memory_id)
    assert f"kept · an unreadable file a write replaced: {kept}" in out


# --- 5. importing an unchanged export again ------------------------------------------------------------------------
def versions_of(gate, memory_id: str) -> list[dict[str, Any]]:
    code, out, err = gate("show", "--history", memory_id, "--json")
    assert code == 0, err
    return json.loads(out)["versions"]


def test_an_unchanged_export_imports_again_as_unchanged_and_replace_writes_only_what_differs(
    gate, project: Path
) -> None:
    ids = []
    for title, scope in [("Celery beat runs on the scheduler host", "private"),
                         ("Deploys need the release manager", "team"),
                         ("Builds are cached per branch", "private")]:
        code, out, err = gate("remember", title, "--scope", scope)
        assert code == 0, err
        ids.append(out.strip())
    assert gate("link", ids[2], "relates", ids[0])[0] == 0
    code, exported, _ = gate("export")
    assert len(exported.splitlines()) == 3
    before = [len(versions_of(gate, memory_id)) for memory_id in ids]
    assert before == [0, 0, 1]  # the link's

    for options in ([], ["--skip-refused"], ["--replace"]):
        code, out, err = gate("import", "-", *options, "--json", stdin=exported)
        assert code == 0, (options, out, err)
        report = json.loads(out)
        assert (report["imported"], report["skipped"], report["replaced"]) == (0, [], []), options
        assert sorted(report["unchanged"]) == sorted(ids)
        code, out, _ = gate("import", "-", *options, stdin=exported)
        assert code == 0 and "imported 0 memories; 3 unchanged" in out, out
    assert [len(versions_of(gate, memory_id)) for memory_id in ids] == before  # no write, no version

    lines = [json.loads(line) for line in exported.splitlines()]
    changed = next(line for line in lines if line["id"] == ids[0])
    changed["title"] = "Celery beat runs on the scheduler host only, never on workers"
    edited = "\n".join(json.dumps(line) for line in lines)
    code, out, err = gate("import", "-", stdin=edited)
    assert code == 2 and "line" in err and "differs" in err and "--replace" in err
    code, out, err = gate("import", "-", "--replace", "--json", stdin=edited)
    assert code == 0, err
    report = json.loads(out)
    assert report["replaced"] == [ids[0]] and sorted(report["unchanged"]) == sorted(ids[1:])
    assert [len(versions_of(gate, memory_id)) for memory_id in ids] == [1, 0, 1]


def test_skip_refused_exits_non_zero_when_a_line_was_refused(gate, project: Path) -> None:
    code, out, err = gate("remember", "Celery beat runs on the scheduler host")
    memory_id = out.strip()
    code, exported, _ = gate("export")
    changed = {**json.loads(exported), "title": "Celery beat runs on every worker"}
    code, out, err = gate("import", "-", "--skip-refused", stdin=json.dumps(changed))
    assert code == 1, (out, err)
    assert "imported 0 memories" in out and "skipped stdin, line 1:" in out
    fresh = {"kind": "finding", "title": "Flower shows the queues on port 5555"}
    code, out, err = gate("import", "-", "--skip-refused", "--json",
                          stdin="\n".join([json.dumps(changed), json.dumps(fresh)]))
    assert code == 1 and len(json.loads(out)["ids"]) == 1  # the rest is imported, the status says one failed
    assert stored(project, memory_id).title == "Celery beat runs on the scheduler host"
