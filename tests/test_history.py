"""The history of every write: each version a write replaces is kept (private, team and user memories),
listed by `gate show --history ID`, brought back by `gate restore ID@N`, and pruned by age and size."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from gate.memory.store.history import history_root
from gate.memory.store.store import Store
from gate.paths import ProjectPaths


def remember(gate, *args: str) -> str:
    code, out, err = gate("remember", *args, "--new")
    assert code == 0, err
    return out.strip()


def history(gate, memory_id: str) -> dict:
    code, out, err = gate("show", "--history", memory_id, "--json")
    assert code == 0, err
    return json.loads(out)


def test_every_kind_of_write_keeps_the_version_it_replaces(gate, project: Path) -> None:
    target = remember(gate, "Ledger totals drift with floats", "--kind", "finding")
    memory_id = remember(gate, "Invoice totals round half up", "--kind", "decision", "--path", "README.md")
    (project / "README.md").write_text("v1")
    assert gate("edit", memory_id, "--cues", "rounding error in totals")[0] == 0
    assert gate("link", memory_id, "relates", target)[0] == 0
    (project / "README.md").write_text("v2")
    assert gate("verify", memory_id, "--refresh")[0] == 0
    assert gate("forget", memory_id)[0] == 0
    data = history(gate, memory_id)
    assert [v["action"] for v in data["versions"]] == ["cues", "link", "refresh", "forget"]
    assert [v["version"] for v in data["versions"]] == [1, 2, 3, 4]
    assert data["versions"][0]["memory"]["cues"] == "" and data["versions"][0]["changed"] == ["cues"]
    assert data["versions"][1]["changed"] == ["links"]
    assert data["versions"][3]["memory"]["status"] == "active" and data["versions"][3]["changed"] == ["status"]
    assert data["current"]["status"] == "forgotten"
    code, out, _ = gate("show", "--history", memory_id)
    assert code == 0
    assert "@1 · replaced" in out and "by cues" in out and "then changed: cues" in out
    assert "now · " in out and "forgotten" in out


def test_restore_brings_a_version_back_and_can_itself_be_undone(gate) -> None:
    memory_id = remember(gate, "Deploy window is Tuesday mornings", "--kind", "decision")
    assert gate("edit", memory_id, "--cues", "when can we deploy")[0] == 0
    assert gate("forget", memory_id)[0] == 0
    code, out, err = gate("search", "deploy window", "--json")
    assert json.loads(out)["hits"] == []
    code, out, err = gate("restore", f"{memory_id}@2", "--json")  # the version before the forget
    assert code == 0, err
    assert json.loads(out) == {"id": memory_id, "restored": 2, "title": "Deploy window is Tuesday mornings"}
    code, out, err = gate("search", "when can we deploy", "--json")
    assert [h["id"] for h in json.loads(out)["hits"]] == [memory_id]
    data = history(gate, memory_id)
    assert [v["action"] for v in data["versions"]] == ["cues", "forget", "restore"]
    assert data["versions"][2]["memory"]["status"] == "forgotten"  # the forgotten version is kept: undoable
    assert gate("restore", f"{memory_id}@3")[0] == 0
    code, out, _ = gate("show", memory_id, "--json")
    assert json.loads(out)["status"] == "forgotten"


def test_import_over_an_id_keeps_the_version_it_replaces(gate, project: Path) -> None:
    memory_id = remember(gate, "Celery beat runs on the scheduler host", "--kind", "finding")
    code, exported, _ = gate("export")
    line = json.loads(exported.splitlines()[0])
    line["title"] = "Celery beat runs on the scheduler host only, never on workers"
    code, _, err = gate("import", "-", stdin=json.dumps(line))
    assert code == 2 and "exists in the store" in err and "--replace" in err
    code, out, err = gate("import", "-", "--replace", "--json", stdin=json.dumps(line))
    assert code == 0, err
    assert json.loads(out)["replaced"] == [memory_id]
    data = history(gate, memory_id)
    assert [v["action"] for v in data["versions"]] == ["import"]
    assert data["versions"][0]["memory"]["title"] == "Celery beat runs on the scheduler host"
    assert data["current"]["title"].endswith("never on workers")


def test_team_and_user_memories_keep_history_outside_the_repository(gate, project: Path) -> None:
    team_id = remember(gate, "Staging deploys need the release manager", "--kind", "directive", "--scope", "team")
    user_id = remember(gate, "I prefer tabs in Makefiles", "--kind", "preference", "--scope", "user")
    for memory_id in (team_id, user_id):
        assert gate("edit", memory_id, "--cues", "who approves")[0] == 0
        assert len(history(gate, memory_id)["versions"]) == 1
    paths = ProjectPaths.for_cwd(project)
    assert (Path(history_root(paths, "team")) / team_id / "1.json").is_file()
    assert (Path(history_root(paths, "user")) / user_id / "1.json").is_file()
    assert not any("history" in str(p) for p in (project / ".gate").rglob("*"))  # nothing new for git to see
    private = Path(history_root(paths, "private"))
    private_id = remember(gate, "The ledger owns the accounts table", "--kind", "finding")
    assert gate("edit", private_id, "--cues", "accounts owner")[0] == 0
    saved = private / private_id / "1.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600 and stat.S_IMODE(saved.parent.stat().st_mode) == 0o700


def test_edit_in_an_editor_keeps_the_version(gate, project: Path, tmp_path: Path, monkeypatch) -> None:
    memory_id = remember(gate, "Redis eviction policy is volatile-lru", "--kind", "finding")
    script = tmp_path / "editor.sh"
    script.write_text('#!/bin/sh\nsed -i "s/volatile-lru/allkeys-lru/" "$1"\n')
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    code, out, err = gate("edit", memory_id)
    assert code == 0 and "updated" in out, err
    data = history(gate, memory_id)
    assert data["versions"][0]["memory"]["title"] == "Redis eviction policy is volatile-lru"
    assert data["current"]["title"] == "Redis eviction policy is allkeys-lru"


def test_history_is_pruned_by_age_and_by_size(gate, project: Path, monkeypatch) -> None:
    memory_id = remember(gate, "Gunicorn runs 4 workers per pod", "--kind", "decision")
    for n in range(3):
        assert gate("edit", memory_id, "--cues", f"workers per pod {n}")[0] == 0
    paths = ProjectPaths.for_cwd(project)
    directory = Path(history_root(paths, "private")) / memory_id
    assert sorted(p.name for p in directory.iterdir()) == ["1.json", "2.json", "3.json"]
    old = time.time() - 200 * 86400
    os.utime(directory / "1.json", (old, old))  # replaced 200 days ago; the default keeps 180
    assert gate("edit", memory_id, "--cues", "workers per pod again")[0] == 0
    assert sorted(p.name for p in directory.iterdir()) == ["2.json", "3.json", "4.json"]
    size = (directory / "4.json").stat().st_size
    monkeypatch.setenv("GATE_HISTORY_MAX_BYTES", str(size * 2 + size // 2))  # room for two versions
    assert gate("edit", memory_id, "--cues", "workers per pod once more")[0] == 0
    assert sorted(p.name for p in directory.iterdir()) == ["4.json", "5.json"]  # the oldest went first
    assert [v["version"] for v in history(gate, memory_id)["versions"]] == [4, 5]


def test_restore_of_a_deleted_file_writes_it_back(gate, project: Path) -> None:
    memory_id = remember(gate, "Nightly export writes CSV to the reports bucket", "--kind", "finding")
    assert gate("edit", memory_id, "--cues", "where do reports go")[0] == 0
    Store.for_cwd(str(project)).locate(memory_id).unlink()
    code, out, err = gate("show", "--history", memory_id)
    assert code == 0 and "no file" in out
    assert gate("restore", f"{memory_id}@1")[0] == 0
    code, out, _ = gate("show", memory_id, "--json")
    assert json.loads(out)["cues"] == ""


@pytest.mark.parametrize(("arg", "code", "message"), [
    ("m-nothing", 2, "bad version"),
    ("m-nothing@x", 2, "bad version"),
    ("m-nothing@1", 3, "no saved version"),
])
def test_restore_refuses_what_it_cannot_find(gate, arg: str, code: int, message: str) -> None:
    got, _, err = gate("restore", arg)
    assert got == code and message in err, err


def test_restore_names_the_versions_there_are(gate) -> None:
    memory_id = remember(gate, "Session cookies are SameSite=Lax", "--kind", "finding")
    assert gate("edit", memory_id, "--cues", "cookie policy")[0] == 0
    code, _, err = gate("restore", f"{memory_id}@7")
    assert code == 3 and "saved versions: @1" in err


def test_a_memory_never_rewritten_has_a_history_of_none(gate) -> None:
    memory_id = remember(gate, "Staging database resets every Sunday night", "--kind", "finding")
    data = history(gate, memory_id)
    assert data["versions"] == [] and data["current"]["title"] == "Staging database resets every Sunday night"
    code, out, err = gate("show", "--history", memory_id)
    assert code == 0, err
    assert out.splitlines()[0].endswith("0 earlier version(s)") and "now · " in out
