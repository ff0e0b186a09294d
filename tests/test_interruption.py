"""Nothing is lost under interruption: `gate import`, `gate remember`, `gate forget` and `gate edit`, each a real
subprocess stopped by SIGINT or SIGKILL at a named point of its writes (gate/memory/store/killpoints.py: the process
signals itself there, so no sleep decides the moment), leave every memory as it was before or as it is after —
never half — and the same command run again converges on the store the uninterrupted run makes.

An import is many files: it is not undone as a whole. Each memory it wrote is whole, an interrupted import says
how many it wrote, and a run again writes only what is not there (lines without an id included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import HANG_S

import gate.memory.model as model
import gate.memory.store.importing as store_import
from gate.memory.store.files import TEMP_PREFIX
from gate.memory.store.store import Store
from gate.paths import ProjectPaths

GATE_BIN = Path(sys.executable).parent / "gate"
LINES = 24


def run_gate(project: Path, *args: str, stdin: str = "", kill_at: str = "", signal: str = "KILL",
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {})}
    environment.pop("GATE_KILL_AT", None)
    if kill_at:
        environment |= {"GATE_KILL_AT": kill_at, "GATE_KILL_SIGNAL": signal}
    return subprocess.run([str(GATE_BIN), *args, "--project", str(project)], input=stdin, capture_output=True,
                          text=True, env=environment, cwd=project, timeout=HANG_S)


def idless_lines(count: int = LINES) -> str:
    """Lines as another tool writes them: no ids, no timestamps."""
    return "\n".join(json.dumps({"kind": "finding", "title": f"Worker pool {n} drains the billing queue",
                                 "body": f"Pool {n} is sized by the reserve waterfall settings, entry {n}."})
                     for n in range(count))


def store_files(project: Path) -> dict[str, dict[str, str]]:
    """Every memory file of the project's private store, parsed (a half-written one fails here), by title."""
    store = Store.for_cwd(str(project))
    assert store.corrupt() == []
    return {m.title: {"id": m.id, "body": m.body, "status": m.status, "cues": m.cues} for m in store.memories()}


def temp_files(project: Path) -> list[str]:
    directory = Path(ProjectPaths.for_cwd(project).private_store)
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(TEMP_PREFIX)) if directory.exists() else []


def indexed_ids(project: Path, *, catch_up: bool = True) -> set[str]:
    """The ids the index holds of the store's memories (after catching up, as any command or hook does first)."""
    code = ("import json, sys; from gate.memory.store.store import Store; s = Store.for_cwd(sys.argv[1]); "
            f"{'s.catch_up(); ' if catch_up else ''}"
            "print(json.dumps(sorted(r['id'] for m in s.memories() if (r := s.index.get(m.id)))))")
    done = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_an_interrupted_import_says_what_it_wrote_and_a_run_again_writes_only_the_rest(project: Path) -> None:
    done = run_gate(project, "import", "-", stdin=idless_lines(), kill_at="files.placed@9", signal="INT")
    assert done.returncode == 130, done.stderr
    assert f"interrupted: 9 of {LINES} memories were written" in done.stderr
    assert "hint: run the same import again" in done.stderr and "Traceback" not in done.stderr
    assert len(store_files(project)) == 9 and temp_files(project) == []
    # what it wrote is indexed by the import itself, not left to the first hook after it
    assert indexed_ids(project, catch_up=False) == {m["id"] for m in store_files(project).values()}
    again = run_gate(project, "import", "-", stdin=idless_lines())
    assert again.returncode == 0, again.stderr
    assert f"imported {LINES - 9} memories" in again.stdout and "9 already in the store" in again.stdout
    assert len(store_files(project)) == LINES  # not 9 + 24
    third = run_gate(project, "import", "-", stdin=idless_lines())
    assert "imported 0 memories" in third.stdout and len(store_files(project)) == LINES
    assert indexed_ids(project) == {m["id"] for m in store_files(project).values()}


@pytest.mark.parametrize("point", ["files.staged", "files.placed@1", "files.placed@13"])
def test_an_import_killed_at_any_point_leaves_whole_memories_and_a_run_again_converges(
    project: Path, point: str
) -> None:
    done = run_gate(project, "import", "-", stdin=idless_lines(), kill_at=point, signal="KILL")
    assert done.returncode == -9
    written = store_files(project)
    expected = {0: 0, 1: 1, 13: 13}[int(point.partition("@")[2] or 0)]
    assert len(written) == expected
    assert all(m["body"].startswith("Pool ") for m in written.values())
    again = run_gate(project, "import", "-", stdin=idless_lines())
    assert again.returncode == 0, again.stderr
    final = store_files(project)
    assert len(final) == LINES and all(final[title]["id"] == m["id"] for title, m in written.items())
    assert temp_files(project) == []  # what the killed writer left is swept
    assert indexed_ids(project) == {m["id"] for m in final.values()}


def test_ids_minted_for_an_import_never_collide(gate, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random 6-hex ids: at 20,000 lines some draw the same (26 lines refused as duplicates of ids the file does
    not contain). Here every draw repeats, and one is an id a later line gives."""
    draws = iter(["m-aaaaaa", "m-aaaaaa", "m-bbbbbb", "m-bbbbbb", "m-given", "m-cccccc", "m-dddddd", "m-eeeeee"])
    monkeypatch.setattr(model, "mint_id", lambda: next(draws))
    monkeypatch.setattr(store_import, "mint_id", lambda: next(draws))  # where the import mints its ids
    lines = [*idless_lines(3).splitlines(), json.dumps({"id": "m-given", "kind": "finding", "title": "Given id"})]
    code, out, err = gate("import", "-", "--json", stdin="\n".join(lines))
    assert code == 0, err
    ids = json.loads(out)["ids"]
    assert len(ids) == 4 and len(set(ids)) == 4 and "m-given" in ids


def test_a_line_with_an_id_and_no_timestamps_imported_twice_is_unchanged(gate, project: Path) -> None:
    line = json.dumps({"id": "m-stamp1", "kind": "finding", "title": "Exported by another tool"})
    assert gate("import", "-", stdin=line)[0] == 0
    code, out, err = gate("import", "-", stdin=line)  # its `created` is filled each run: not a difference
    assert code == 0, err
    assert "imported 0 memories; 1 unchanged" in out


REMEMBER = ["remember", "Billing queue drains on pool four", "--body", "the reserve waterfall entry", "--new"]


@pytest.mark.parametrize("signal", ["KILL", "INT"])
@pytest.mark.parametrize("point", ["file.temp-written", "file.placed", "store.written"])
def test_remember_stopped_at_any_point_leaves_nothing_or_the_memory(project: Path, point: str, signal: str) -> None:
    done = run_gate(project, *REMEMBER, kill_at=point, signal=signal)
    assert done.returncode == (-9 if signal == "KILL" else 130), done.stderr
    assert "Traceback" not in done.stderr
    found = store_files(project)
    assert found in ({}, {"Billing queue drains on pool four": found.get("Billing queue drains on pool four")})
    assert temp_files(project) == [] or signal == "KILL"
    if not found:  # before: running it again writes it
        assert run_gate(project, *REMEMBER).returncode == 0
    final = store_files(project)
    assert list(final) == ["Billing queue drains on pool four"]
    assert final["Billing queue drains on pool four"]["body"] == "the reserve waterfall entry"
    assert indexed_ids(project) == {final["Billing queue drains on pool four"]["id"]}


def remembered(project: Path) -> str:
    done = run_gate(project, *REMEMBER)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("signal", ["KILL", "INT"])
@pytest.mark.parametrize("point", ["store.kept", "file.temp-written", "file.placed", "store.written"])
@pytest.mark.parametrize("command", ["forget", "cues"])
def test_forget_and_edit_stopped_at_any_point_leave_before_or_after(
    project: Path, command: str, point: str, signal: str
) -> None:
    memory_id = remembered(project)
    before = store_files(project)["Billing queue drains on pool four"]
    args = ["forget", memory_id] if command == "forget" else ["edit", memory_id, "--cues", "pool four drain"]
    after = {**before, "status": "forgotten"} if command == "forget" else {**before, "cues": "pool four drain"}
    done = run_gate(project, *args, kill_at=point, signal=signal)
    assert done.returncode == (-9 if signal == "KILL" else 130), done.stderr
    assert store_files(project)["Billing queue drains on pool four"] in (before, after)
    again = run_gate(project, *args)
    assert again.returncode == 0, again.stderr
    assert store_files(project)["Billing queue drains on pool four"] == after
    assert indexed_ids(project) == {memory_id}
    code = ("import sys; from gate.memory.store.store import Store; s = Store.for_cwd(sys.argv[1]); s.catch_up(); "
            "print(s.index.get(sys.argv[2])['status'])")
    status = subprocess.run([sys.executable, "-c", code, str(project), memory_id], capture_output=True, text=True,
                            timeout=HANG_S).stdout.strip()
    assert status == ("forgotten" if command == "forget" else "active")


EDITOR_SAVES_THEN_CTRL_C = """#!{python}
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)  # an editor handles Ctrl-C itself (vi ignores it)
path = sys.argv[1]
text = open(path, encoding="utf-8").read().replace("the reserve waterfall entry", "the saved edit")
with open(path, "w", encoding="utf-8") as handle:
    handle.write(text)
os.killpg(os.getpgrp(), signal.SIGINT)  # Ctrl-C in the terminal: the whole foreground group gets it
sys.exit({status})
"""


@pytest.mark.parametrize("editor_status", [0, 1])
def test_ctrl_c_while_the_editor_runs_does_not_drop_the_text_it_saved(
    project: Path, tmp_path: Path, editor_status: int
) -> None:
    """SIGINT reached gate while the editor ran: gate died and the draft went with its temporary directory."""
    memory_id = remembered(project)
    editor = tmp_path / "editor"
    editor.write_text(EDITOR_SAVES_THEN_CTRL_C.format(python=sys.executable, status=editor_status), encoding="utf-8")
    editor.chmod(0o755)
    environment = {**os.environ, "EDITOR": str(editor), "TMPDIR": str(tmp_path)}
    done = subprocess.run([str(GATE_BIN), "edit", memory_id, "--project", str(project)], capture_output=True,
                          text=True, env=environment, cwd=project, timeout=HANG_S, start_new_session=True)
    body = store_files(project)["Billing queue drains on pool four"]["body"]
    if editor_status == 0:  # the editor saved and exited normally: the edit is applied
        assert done.returncode == 0, done.stderr
        assert body == "the saved edit"
    else:  # the editor failed: nothing changed, and the text it saved is kept, named
        assert done.returncode != 0 and body == "the reserve waterfall entry"
        kept = [p for p in tmp_path.glob("gate-edit-*.toml")]
        assert len(kept) == 1 and str(kept[0]) in done.stderr
        assert "the saved edit" in kept[0].read_text(encoding="utf-8")


def saved_versions(project: Path, memory_id: str) -> list[dict]:
    done = run_gate(project, "show", memory_id, "--history", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["versions"]


@pytest.mark.parametrize("point", ["history.opened", "store.kept"])
def test_a_forget_killed_while_keeping_the_version_leaves_one_whole_version(project: Path, point: str) -> None:
    """Killed after opening the version file, it left an empty one that took a number; killed after keeping it,
    the run again kept the same version a second time."""
    memory_id = remembered(project)
    assert run_gate(project, "forget", memory_id, kill_at=point).returncode == -9
    assert run_gate(project, "forget", memory_id).returncode == 0
    versions = saved_versions(project, memory_id)
    assert [v["version"] for v in versions] == [1]
    assert versions[0]["memory"]["status"] == "active"
    history = Path(ProjectPaths.for_cwd(project).dirs.data) / "projects" / ProjectPaths.for_cwd(project).key
    assert [p.name for p in (history / "history" / "private" / memory_id).glob("*.json")] == ["1.json"]
