"""The index never starves (issue 29): standing memories and tasks do not leave the session-start index empty,
the environment's facts come first in it, and the audit says what was left out."""

from __future__ import annotations

from pathlib import Path

from test_hooks import audit, context_of, event

from gate.memory.model import Memory
from gate.memory.store.store import Store


def _remember(project: Path, memory_id: str, kind: str, title: str, body: str = "", tags: list[str] | None = None,
              created: str = "2026-01-01T00:00:00Z") -> None:
    Store.for_cwd(str(project)).remember(Memory(id=memory_id, kind=kind, title=title, body=body, tags=tags or [],
                                                created=created, updated=created))


def test_standing_memories_that_fill_their_budget_leave_the_index_its_lines(project: Path, hook) -> None:
    for number in range(30):  # ~6,000 characters of directives: past the 1000-token standing budget
        _remember(project, f"m-rule-{number:02d}", "directive", f"Directive {number}: follow the release checklist",
                  body="Every release follows the checklist in docs/release.md, step by step. " * 3)
    _remember(project, "m-gotcha-1", "gotcha", "The invoice export drops rows with a null currency")
    _remember(project, "m-finding-1", "finding", "Nightly reports read the replica, not the primary")
    out, code = hook(event(project, "SessionStart", source="startup"))
    assert code == 0
    text = context_of(out, "SessionStart")
    record = audit()[-1]
    assert set(record["indexed"]) == {"m-gotcha-1", "m-finding-1"}
    assert "m-gotcha-1 · gotcha" in text and "null currency" in text
    assert record["left_out"] and all(i.startswith("m-rule-") for i in record["left_out"])
    assert len(text) <= 9_500  # within what the CLI takes whole


def test_the_environment_comes_first_and_the_audit_counts_what_the_index_had_no_room_for(project: Path,
                                                                                          hook) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[index]\nmax_lines = 2\n")
    _remember(project, "m-env-db", "reference", "The app's database is Postgres 16 in the docker container db-1",
              created="2026-01-01T00:00:00Z")
    for number in range(3):
        _remember(project, f"m-gotcha-{number}", "gotcha", f"Gotcha {number} about the invoice layout",
                  created=f"2026-02-0{number + 1}T00:00:00Z")
    hook(event(project, "SessionStart", source="startup"))
    record = audit()[-1]
    assert record["indexed"][0] == "m-env-db"  # older, and of the last kind: first all the same
    assert len(record["indexed"]) == 2 and record["index_beyond_max_lines"] == 2


def _kept_files(project: Path) -> list[Path]:
    from gate.paths import ProjectPaths

    return sorted(Path(ProjectPaths.for_cwd(str(project)).index_dir).glob("kept-*.marshal"))


def test_a_session_start_reads_back_what_the_last_one_kept_and_reads_again_after_a_change(project: Path,
                                                                                           hook) -> None:
    """The reads a session start keeps for the index's commit (issue 31) give the answer the index gives, and a
    write (a new commit) is never answered from the reads kept before it."""
    _remember(project, "m-rule-a", "directive", "Run the migrations before the tests")
    _remember(project, "m-env-db", "reference", "The app's database is Postgres 16 in the docker container db-1")
    _remember(project, "m-gotcha-1", "gotcha", "The invoice export drops rows with a null currency")
    first, _ = hook(event(project, "SessionStart", source="startup", session="start-1"))
    assert _kept_files(project)  # kept for the next start
    second, _ = hook(event(project, "SessionStart", source="startup", session="start-2"))
    assert context_of(second, "SessionStart") == context_of(first, "SessionStart")
    assert audit()[-1]["indexed"] == ["m-env-db", "m-gotcha-1"]
    for kept in _kept_files(project):  # and without them, the same answer
        kept.unlink()
    third, _ = hook(event(project, "SessionStart", source="startup", session="start-3"))
    assert context_of(third, "SessionStart") == context_of(first, "SessionStart")

    _remember(project, "m-rule-b", "directive", "Tag every release in git")
    _remember(project, "m-gotcha-2", "gotcha", "The staging server clock runs five minutes late",
              created="2026-03-01T00:00:00Z")
    Store.for_cwd(str(project)).forget("m-gotcha-1")
    after, _ = hook(event(project, "SessionStart", source="startup", session="start-4"))
    text = context_of(after, "SessionStart")
    assert "Tag every release in git" in text and "Run the migrations" in text
    assert audit()[-1]["indexed"] == ["m-gotcha-2", "m-env-db"]  # the new environment fact first; the forgotten gone
    again, _ = hook(event(project, "SessionStart", source="startup", session="start-5"))
    assert context_of(again, "SessionStart") == text


def test_kept_reads_of_another_commit_or_damaged_ones_are_not_read(project: Path, hook) -> None:
    _remember(project, "m-rule-a", "directive", "Run the migrations before the tests")
    first, _ = hook(event(project, "SessionStart", source="startup", session="kept-1"))
    kept = _kept_files(project)
    assert kept
    for path in kept:
        path.write_bytes(b"\x00not marshal")
    second, _ = hook(event(project, "SessionStart", source="startup", session="kept-2"))
    assert context_of(second, "SessionStart") == context_of(first, "SessionStart")
    import marshal

    for path in _kept_files(project):  # well formed, but kept for another commit: a directive that is no more
        data = marshal.loads(path.read_bytes())
        data["commit"] = b"another commit"
        data["reads"] = {limit: [{**record, "title": "A rule nobody wrote"} for record in records]
                         for limit, records in data["reads"].items()} if path.name.startswith("kept-kind-") else {}
        path.write_bytes(marshal.dumps(data))
    third, _ = hook(event(project, "SessionStart", source="startup", session="kept-3"))
    assert context_of(third, "SessionStart") == context_of(first, "SessionStart")
    assert "A rule nobody wrote" not in context_of(third, "SessionStart")


def _index(project: Path):
    from gate.memory.index.read import MemoryIndex
    from gate.paths import ProjectPaths

    return MemoryIndex(ProjectPaths.for_cwd(str(project)))


def _named(*words: str) -> list[str]:
    """The environment's words as the index holds them (standing.py asks with these)."""
    from gate.textproc import terms

    return terms(" ".join(words))


def test_reads_kept_in_a_process_are_read_again_after_a_write_in_that_process(project: Path) -> None:
    """One process (a replay, `gate` itself) keeps its reads for the commit they came from: a write made since,
    by this process or another, is a new commit, and the next read sees it, not what was kept."""
    _remember(project, "m-rule-a", "directive", "Run the migrations before the tests")
    _remember(project, "m-env-db", "reference", "The app's database is Postgres 16 in the docker container db-1")
    index = _index(project)
    ids = ["m-env-db", "m-env-replica"]
    assert [r["id"] for r in index.of_kind("directive")] == ["m-rule-a"]
    assert index.naming_any_kept(ids, ("title", "tags"), _named("postgres")) == {"m-env-db"}
    _remember(project, "m-rule-b", "directive", "Tag every release in git")
    _remember(project, "m-env-replica", "reference", "Reports read the Postgres replica on port 5433")
    assert sorted(r["id"] for r in index.of_kind("directive")) == ["m-rule-a", "m-rule-b"]
    assert index.naming_any_kept(ids, ("title", "tags"), _named("postgres")) == set(ids)
    index.save_kept_reads()
    assert sorted(r["id"] for r in _index(project).of_kind("directive")) == ["m-rule-a", "m-rule-b"]


def test_the_environment_answer_is_kept_by_the_terms_asked(project: Path) -> None:
    """naming_any_kept answers the ids, the fields and the terms asked: the same memories asked about other
    environment terms (another machine's, a changed rule) are read again, in the process and from the file."""
    _remember(project, "m-env-db", "reference", "The app's database is Postgres 16 in the docker container db-1")
    _remember(project, "m-env-cache", "reference", "The cache is Redis 7 on port 6380")
    ids = ["m-env-db", "m-env-cache"]
    index = _index(project)
    assert index.naming_any_kept(ids, ("title", "tags"), _named("postgres")) == {"m-env-db"}
    assert index.naming_any_kept(ids, ("title", "tags"), _named("redis")) == {"m-env-cache"}
    assert index.naming_any_kept(ids, ("title", "tags"), _named("postgres", "redis")) == set(ids)
    index.save_kept_reads()
    fresh = _index(project)  # the next process, reading the kept file
    assert fresh.naming_any_kept(ids, ("title", "tags"), _named("redis")) == {"m-env-cache"}
    assert fresh.naming_any_kept(ids, ("title", "tags"), _named("docker")) == {"m-env-db"}
    assert fresh.naming_any_kept(ids, ("title", "tags"), _named("kafka")) == set()


def test_a_resumed_session_is_shown_only_what_is_new_since_its_earlier_start(project: Path, hook) -> None:
    """A resume (`claude --resume`, `--continue`) keeps the conversation, and with it the session-start context it
    got: the index is not injected again (~3,500 characters a resume). What was added or edited since is shown,
    alone; after a compaction the new window gets everything again, and a resume after that nothing more."""
    import dataclasses

    _remember(project, "m-rule-a", "directive", "Run the migrations before the tests")
    _remember(project, "m-gotcha-1", "gotcha", "The invoice export drops rows with a null currency")
    _remember(project, "m-finding-1", "finding", "Nightly reports read the replica, not the primary")
    first, _ = hook(event(project, "SessionStart", source="startup", session="s-resumed"))
    assert "m-gotcha-1" in context_of(first, "SessionStart") and "m-rule-a" in context_of(first, "SessionStart")

    again, code = hook(event(project, "SessionStart", source="resume", session="s-resumed"))
    assert code == 0 and again.strip() == "", again  # nothing: the conversation holds all of it
    assert audit()[-1]["reason"] == "SKIP_RESUMED_NOTHING_NEW"

    _remember(project, "m-gotcha-2", "gotcha", "The staging server clock runs five minutes late",
              created="2026-03-01T00:00:00Z")
    store = Store.for_cwd(str(project))
    edited = store.get("m-finding-1")
    store.update(dataclasses.replace(edited, title="Nightly reports read the primary since the replica was retired",
                                     updated="2026-03-02T00:00:00Z"))
    resumed, _ = hook(event(project, "SessionStart", source="resume", session="s-resumed"))
    text = context_of(resumed, "SessionStart")
    assert "m-gotcha-2" in text and "five minutes late" in text  # new since
    assert "replica was retired" in text  # edited since
    assert "m-gotcha-1" not in text and "m-rule-a" not in text  # unchanged: still in the conversation
    assert "session resumed" in text
    assert set(audit()[-1]["indexed"]) == {"m-gotcha-2", "m-finding-1"}

    compacted, _ = hook(event(project, "SessionStart", source="compact", session="s-resumed"))
    text = context_of(compacted, "SessionStart")
    assert all(i in text for i in ("m-rule-a", "m-gotcha-1", "m-gotcha-2", "m-finding-1"))  # a new window: all
    after, _ = hook(event(project, "SessionStart", source="resume", session="s-resumed"))
    assert after.strip() == "" and audit()[-1]["reason"] == "SKIP_RESUMED_NOTHING_NEW"

    other, _ = hook(event(project, "SessionStart", source="resume", session="s-never-seen"))
    assert "m-gotcha-1" in context_of(other, "SessionStart")  # a session this machine never started: all of it
