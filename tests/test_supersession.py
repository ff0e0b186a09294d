"""Supersession has one source of truth: the `supersedes` links. The index derives "superseded" whenever it
catches up, whatever changed the files — an import, a team file pulled from another writer, a hand edit in
place, forgetting the successor — and no write ever marks the memory it replaces."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
import tantivy

from gate.errors import ValidationError
from gate.memory.model import Link, Memory
from gate.memory.store.files import memory_path, read_memory, to_toml
from gate.memory.store.store import Store
from gate.paths import ProjectPaths

TOPICS = [
    ("reserve waterfall trigger", "Reserve waterfall trigger fires at {n} days overdue"),
    ("celery broker url", "Celery broker url comes from setting {n}"),
    ("pgbouncer pool size", "PgBouncer pool size is {n} connections"),
    ("invoice rounding mode", "Invoice rounding mode is mode {n}"),
    ("webhook retry backoff", "Webhook retry backoff caps at {n} minutes"),
    ("nightly export bucket", "Nightly export bucket is reports-{n}"),
    ("session cookie lifetime", "Session cookie lifetime is {n} hours"),
    ("gunicorn worker count", "Gunicorn worker count is {n} per pod"),
    ("search cache ttl", "Search cache ttl is {n} minutes"),
    ("refund approval threshold", "Refund approval threshold is {n} EUR"),
    ("upload resize width", "Upload resize width is {n} pixels"),
    ("kafka consumer lag alert", "Kafka consumer lag alert fires at {n} messages"),
    ("terraform state lock table", "Terraform state lock table is locks-{n}"),
    ("api rate limit quota", "Api rate limit quota is {n} requests per minute"),
]


def remember(gate, *args: str) -> str:
    code, out, err = gate("remember", *args, "--new")
    assert code == 0, err
    return out.strip()


def search_ids(gate, query: str) -> list[str]:
    code, out, err = gate("search", query, "--json")
    assert code == 0, err
    return [hit["id"] for hit in json.loads(out)["hits"]]


def status(gate, memory_id: str) -> str:
    code, out, err = gate("show", memory_id, "--json")
    assert code == 0, err
    return json.loads(out)["status"]


def hook_delivers(hook, project: Path, prompt: str, session: str) -> str:
    """The recall hook's injected text for the first prompt of a new session (a shift by definition)."""
    event = {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out, code = hook(event)
    assert code == 0
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""


# --- import ---------------------------------------------------------------------------------------------------------
def test_import_with_links_shows_heads_only(gate, project: Path, tmp_path: Path) -> None:
    """Chains of 2-4 versions per topic, written as an export from elsewhere would hold them: the old versions'
    files still say "active" (nothing marked them), only the successors' links say otherwise."""
    rng = random.Random(15)
    lines: list[dict[str, Any]] = []
    heads: dict[str, str] = {}
    replaced: set[str] = set()
    for t, (query, title) in enumerate(TOPICS):
        previous = None
        for version in range(rng.randint(2, 4)):
            memory_id = f"m-t{t:02d}v{version}"
            links = [{"type": "supersedes", "target": previous}] if previous else []
            lines.append({"id": memory_id, "kind": "decision", "title": title.format(n=10 * (version + 1) + t),
                          "links": links, "status": "active"})
            if previous:
                replaced.add(previous)
            previous = memory_id
        heads[query] = previous
    rng.shuffle(lines)  # successors before what they replace, too
    source = tmp_path / "memories.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines))
    code, out, err = gate("import", str(source), "--json")
    assert code == 0, err
    shown_stale = 0
    for query, head in heads.items():
        ids = search_ids(gate, query)
        assert ids and ids[0] == head, (query, ids)
        shown_stale += len(set(ids) & replaced)
    assert shown_stale == 0
    code, out, _ = gate("list", "--json")
    assert {m["id"] for m in json.loads(out)["memories"]} == set(heads.values())
    code, out, _ = gate("reindex", "--check", "--json")
    assert code == 0 and json.loads(out)["consistent"] is True
    # the replaced memories' files were not rewritten: the links are the only record of supersession
    store = Store.for_cwd(str(project))
    assert all(read_memory(store.locate(i)).status == "active" for i in replaced)


# --- team files from another writer, hand edits --------------------------------------------------------------------
def _team_file(project: Path, memory: Memory) -> Path:
    team = project / ".gate" / "memories"
    team.mkdir(parents=True, exist_ok=True)
    memory.scope = "team"
    path = team / f"{memory.id}.toml"
    path.write_text(to_toml(memory), encoding="utf-8")
    return path


def test_team_file_with_a_supersedes_link_from_another_writer_reaches_the_next_hook(gate, hook, project: Path) -> None:
    old = remember(gate, "Reserve waterfall trigger fires at 30 days overdue", "--kind", "decision")
    assert old in hook_delivers(hook, project, "When does the reserve waterfall trigger fire?", "before")
    # as `git pull` brings it: a new file in the team store, its link written on another machine
    _team_file(project, Memory(id="m-pulled", kind="decision", title="Reserve waterfall trigger moved to 45 days",
                               links=[Link("supersedes", old)], source="human"))
    text = hook_delivers(hook, project, "When does the reserve waterfall trigger fire?", "after")
    assert "m-pulled" in text
    assert f"{old} ·" not in text  # not delivered as a memory of its own (the head names what it supersedes)
    assert status(gate, old) == "superseded"


def test_hand_edit_in_place_that_adds_a_link_reaches_the_next_hook(gate, hook, project: Path) -> None:
    """An editor that writes the file in place leaves the directory's mtime alone: no catch-up looks at it.
    The search checks its candidates' files, and the edited successor is one of them."""
    old = remember(gate, "Reserve waterfall trigger fires at 30 days overdue", "--kind", "decision")
    new = remember(gate, "Reserve waterfall trigger fires at 45 days overdue after the amendment", "--kind",
                   "decision")
    store = Store.for_cwd(str(project))
    path = store.locate(new)
    # The directory dated a minute back, past the racy window (gate/memory/store/scan.py): the hook below records it
    # as settled, so after the edit no catch-up looks at the directory and only the candidates' check can see it.
    written = time.time_ns() - 60 * 1_000_000_000
    os.utime(path.parent, ns=(written, written))
    text = hook_delivers(hook, project, "When does the reserve waterfall trigger fire?", "before")
    assert old in text and new in text  # two current beliefs: the link is missing
    directory_mtime = path.parent.stat().st_mtime_ns
    before = path.stat()
    edited = read_memory(path)
    edited.links.append(Link("supersedes", old))
    with open(path, "r+", encoding="utf-8") as handle:  # in place, as many editors save
        handle.write(to_toml(edited))
        handle.truncate()
    after = path.stat()
    assert after.st_ino == before.st_ino and path.parent.stat().st_mtime_ns == directory_mtime
    assert after.st_size != before.st_size  # the file's signature moved (by its size: whatever the clock's tick)
    text = hook_delivers(hook, project, "When does the reserve waterfall trigger fire?", "after")
    assert new in text and f"{old} ·" not in text
    assert f"supersedes {old}" in text
    assert status(gate, old) == "superseded"


def test_hand_edit_saved_by_rename_that_adds_a_link_reaches_the_next_hook(gate, hook, project: Path) -> None:
    old = remember(gate, "Gunicorn worker count is 4 per pod", "--kind", "decision")
    new = remember(gate, "Gunicorn runs 8 workers per pod since the move to larger nodes", "--kind", "decision")
    store = Store.for_cwd(str(project))
    path = store.locate(new)
    edited = read_memory(path)
    edited.links.append(Link("supersedes", old))
    temp = path.with_name(".edit.tmp")
    temp.write_text(to_toml(edited), encoding="utf-8")
    os.replace(temp, path)
    text = hook_delivers(hook, project, "How many gunicorn workers per pod?", "after")
    assert new in text and f"{old} ·" not in text


# --- forgetting the successor -----------------------------------------------------------------------------------
def test_forgetting_the_successor_makes_the_predecessor_current_again(gate, project: Path) -> None:
    store = Store.for_cwd(str(project))
    old = remember(gate, "Search cache ttl is 5 minutes", "--kind", "decision")
    old_bytes = store.locate(old).read_bytes()
    new = remember(gate, "Search cache ttl is 15 minutes", "--kind", "decision", "--supersedes", old)
    assert store.locate(old).read_bytes() == old_bytes  # superseding writes only the successor
    assert search_ids(gate, "search cache ttl") == [new]
    assert status(gate, old) == "superseded"
    code, _, err = gate("forget", new)
    assert code == 0, err
    assert search_ids(gate, "search cache ttl") == [old]
    assert status(gate, old) == "active"
    code, out, _ = gate("list", "--json")
    assert [m["id"] for m in json.loads(out)["memories"]] == [old]


def test_forgetting_one_of_two_successors_keeps_the_predecessor_superseded(gate) -> None:
    old = remember(gate, "Upload resize width is 1024 pixels", "--kind", "decision")
    first = remember(gate, "Upload resize width is 2048 pixels", "--kind", "decision", "--supersedes", old)
    second = remember(gate, "Upload resize width is 1600 pixels for thumbnails", "--kind", "decision",
                      "--supersedes", old)
    code, _, _ = gate("forget", first)
    assert code == 0
    assert status(gate, old) == "superseded"
    assert search_ids(gate, "upload resize width") == [second]


def test_link_supersedes_marks_through_the_index_only(gate, project: Path) -> None:
    store = Store.for_cwd(str(project))
    old = remember(gate, "Kafka consumer lag alert fires at 1000 messages", "--kind", "decision")
    new = remember(gate, "Kafka consumer lag alert fires at 5000 messages", "--kind", "decision")
    old_bytes = store.locate(old).read_bytes()
    code, _, err = gate("link", new, "supersedes", old)
    assert code == 0, err
    assert store.locate(old).read_bytes() == old_bytes
    assert search_ids(gate, "kafka consumer lag alert") == [new]
    code, _, err = gate("restore", f"{new}@1")  # undo the link: the version before it
    assert code == 0, err
    assert sorted(search_ids(gate, "kafka consumer lag alert")) == sorted([old, new])
    assert status(gate, old) == "active"


def test_a_legacy_superseded_status_without_a_successor_no_longer_hides_a_memory(gate, project: Path) -> None:
    """Earlier versions wrote `status = "superseded"` into the replaced file; only the links count now."""
    paths = ProjectPaths.for_cwd(project)
    store_dir = Path(paths.private_store)
    store_dir.mkdir(parents=True)
    lone = Memory(id="m-legacy", kind="finding", title="Terraform state lock table is locks-main", status="superseded",
                  project=str(project.resolve()))
    memory_path(store_dir, lone.id).write_text(to_toml(lone))
    assert search_ids(gate, "terraform state lock table") == ["m-legacy"]
    assert status(gate, "m-legacy") == "active"


# --- an index of the previous schema ---------------------------------------------------------------------------------
def test_an_index_of_the_previous_schema_is_rebuilt_cleanly(gate, project: Path) -> None:
    remember(gate, "PgBouncer runs in transaction pooling mode", "--kind", "finding",
             "--cues", "prod is out of db connections")
    store = Store.for_cwd(str(project))
    index_dir = Path(store.index.dir)
    for child in index_dir.iterdir():
        if child.is_file():
            child.unlink()
    builder = tantivy.SchemaBuilder()  # version 2's schema: no cues, no file signature
    for name in ("key", "id"):
        builder.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("title", "body", "tags", "kind", "status", "scope", "link_target"):
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_bytes_field("record", stored=True)
    old = tantivy.Index(builder.build(), path=str(index_dir))
    writer = old.writer(15_000_000, 1)
    writer.add_document(tantivy.Document(key="private/m-ghost", id="m-ghost", title="ghost", record=b"{}"))
    writer.commit()
    writer.wait_merging_threads()
    (index_dir / "dirs.json").write_text(json.dumps({"version": 2, "dirs": {}}))
    ids = search_ids(gate, "out of db connections")
    assert len(ids) == 1 and ids[0] != "m-ghost"
    code, out, _ = gate("reindex", "--check", "--json")
    assert code == 0 and json.loads(out)["consistent"] is True


def test_a_link_that_would_close_a_supersession_cycle_is_refused_naming_the_chain(gate, project: Path) -> None:
    """`gate link A supersedes B` then `gate link B supersedes A` made both superseded: search found neither."""
    first = remember(gate, "Reserve waterfall trigger fires at 30 days overdue", "--kind", "decision")
    second = remember(gate, "Reserve waterfall trigger fires at 45 days overdue", "--kind", "decision")
    third = remember(gate, "Reserve waterfall trigger fires at 60 days overdue", "--kind", "decision")
    assert gate("link", second, "supersedes", first)[0] == 0
    code, out, err = gate("link", first, "supersedes", second)
    assert code != 0
    assert f"{first} supersedes {second} supersedes {first}" in err
    assert "nothing was written" in err and "hint:" in err and f"gate edit {second}" in err
    assert "Traceback" not in err
    assert not any(link.target == second for link in Store.for_cwd(str(project)).get(first).links)
    assert gate("link", third, "supersedes", second)[0] == 0
    code, out, err = gate("link", first, "supersedes", third)  # a longer ring
    assert code != 0 and f"{first} supersedes {third} supersedes {second} supersedes {first}" in err
    assert status(gate, first) == "superseded" and status(gate, third) == "active"
    assert third in search_ids(gate, "reserve waterfall trigger")
    # an edit that adds the link by hand is refused the same way
    memory = Store.for_cwd(str(project)).get(first)
    memory.links.append(Link("supersedes", third))
    with pytest.raises(ValidationError, match="supersession cycle"):
        Store.for_cwd(str(project)).update(memory)


def test_an_import_refuses_the_line_that_closes_a_supersession_cycle(gate, project: Path) -> None:
    lines = [
        {"id": "m-ring-a", "kind": "decision", "title": "Pool size is 10", "links": [{"type": "supersedes",
                                                                                    "target": "m-ring-b"}]},
        {"id": "m-ring-b", "kind": "decision", "title": "Pool size is 20", "links": [{"type": "supersedes",
                                                                                    "target": "m-ring-a"}]},
        {"id": "m-ring-c", "kind": "fix", "title": "Pool size fix", "links": [{"type": "fixes", "target": "m-ring-b"}]},
    ]
    code, out, err = gate("import", "-", stdin="\n".join(json.dumps(line) for line in lines))
    assert code == 2 and "line 2: m-ring-b supersedes m-ring-a would close a supersession cycle" in err
    assert Store.for_cwd(str(project)).memories() == []
    code, out, err = gate("import", "-", "--skip-refused", "--json", stdin="\n".join(json.dumps(x) for x in lines))
    report = json.loads(out)
    # lines 1 and 3 link to the refused line 2: refused in turn, not written with a link to nothing
    assert report["ids"] == [] and [s["line"] for s in report["skipped"]] == [1, 2, 3]
    # the ring across the store and the input: the store's memory stays, the line closing it is refused
    assert gate("import", "-", stdin=json.dumps({**lines[0], "links": []}))[0] == 0
    assert gate("link", "m-ring-a", "supersedes", "m-ring-a")[0] != 0  # a memory superseding itself, too
    assert gate("import", "-", stdin=json.dumps(lines[1]))[0] == 0  # b supersedes a: no ring yet
    code, out, err = gate("import", "-", "--replace", stdin=json.dumps(lines[0]))
    assert code == 2 and "m-ring-a supersedes m-ring-b supersedes m-ring-a" in err, err
    assert status(gate, "m-ring-b") == "active"

def test_doctor_finds_a_supersession_cycle_that_arrives_in_a_pulled_team_file(gate, project: Path) -> None:
    from support import doctor_checks, doctor_report

    old = remember(gate, "Reserve waterfall trigger fires at 30 days overdue", "--kind", "decision", "--scope", "team")
    _, report = doctor_report(gate, "--no-run")
    assert doctor_checks(report, "supersession") == []
    successor = _team_file(project, Memory(id="m-pulled", kind="decision", title="Reserve waterfall moved to 45 days",
                                           links=[Link("supersedes", old)], source="human"))
    memory = read_memory(memory_path(successor.parent, old))
    memory.links.append(Link("supersedes", "m-pulled"))
    memory_path(successor.parent, old).write_text(to_toml(memory), encoding="utf-8")  # as `git pull` brings it
    code, report = doctor_report(gate, "--no-run")
    found = doctor_checks(report, "supersession", "fail")
    assert code == 1 and len(found) == 1
    assert f"{old} supersedes m-pulled supersedes {old}" in found[0]["message"] or \
        f"m-pulled supersedes {old} supersedes m-pulled" in found[0]["message"]
    assert found[0]["hint"] and "gate edit" in found[0]["hint"]
