"""The store: TOML files as the source of truth, the derived tantivy index, and the memory CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gate.memory.model import Link, Memory
from gate.memory.store.files import read_memory, write_memory
from gate.memory.store.store import Store
from gate.paths import ProjectPaths, background_python


def remember(gate, *args: str) -> str:
    code, out, err = gate("remember", *args)
    assert code == 0, err
    return out.strip()


def search_ids(gate, query: str, *extra: str) -> tuple[list[str], list[dict]]:
    code, out, err = gate("search", query, "--json", *extra)
    assert code == 0, err
    data = json.loads(out)
    return [hit["id"] for hit in data["hits"]], data["related"]


def test_round_trip_of_every_field(project: Path) -> None:
    store = Store.for_cwd(str(project))
    (project / "src").mkdir()
    (project / "src" / "ledger.py").write_text("ROUNDING = 'half-even'\n")
    target = store.remember(Memory(id="m-target", kind="finding", title="Ledger totals drift with floats"))
    memory = Memory(
        id="m-every",
        kind="gotcha",
        title="Ledger rounding must be half-even",
        body="Multi-line body\nwith \"quotes\" and ''' and unicode — ünïcødé",
        tags=["payments", "rounding"],
        scope="private",
        paths=["src/ledger.py"],
        links=[Link("fixes", target.id)],
        triggers=["path:src/ledger.py"],
        source="human",
        session="sess-1",
    )
    store.remember(memory)
    again = store.get("m-every")
    assert again.to_dict() == memory.to_dict()
    assert again.anchors == {"src/ledger.py": memory.anchors["src/ledger.py"]}
    assert again.anchors["src/ledger.py"].startswith("sha256:")
    assert again.project == store.paths.key and store.paths.how == "repository"  # the repository, not the path


def test_private_files_and_dirs_are_owner_only(project: Path) -> None:
    store = Store.for_cwd(str(project))
    store.remember(Memory(id="m-perm", kind="finding", title="Permissions are tight"))
    path = store.locate("m-perm")
    assert path is not None
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_validation_errors_write_nothing(gate, project: Path) -> None:
    for args, message in [
        (("",), "empty title"),
        (("x" * 200,), "at most 160"),
        (("fine title", "--link", "fixes:m-nothere"), "points at no memory"),
        (("fine title", "--link", "bogus:m-abc"), "unknown link type"),
        (("fine title", "--id", "BAD ID"), "invalid id"),
    ]:
        code, _, err = gate("remember", *args)
        assert code != 0
        assert message in err
    assert Store.for_cwd(str(project)).memories() == []
    code, _, err = gate("remember", "title", "--kind", "rumour")
    assert code != 0 and "invalid choice" in err


def test_unknown_kind_in_a_file_is_reported_not_fatal(gate, project: Path) -> None:
    paths = ProjectPaths.for_cwd(project)
    Path(paths.private_store).mkdir(parents=True)
    (Path(paths.private_store) / "m-bad.toml").write_text('id = "m-bad"\nkind = "rumour"\ntitle = "x"\n')
    (Path(paths.private_store) / "m-broken.toml").write_text("this is [not toml")
    good = remember(gate, "Deploys go through the staging gate first", "--kind", "directive")
    code, out, err = gate("list")
    assert code == 0
    assert good in out
    assert "m-bad" in err and "unknown kind" in err
    assert "m-broken" in err and "not valid TOML" in err
    assert search_ids(gate, "staging deploys")[0] == [good]


# A writer that stops at one point of write_memory (the payload half written into its file, the fsync, the
# rename, the directory's fsync) and says where, so that the SIGKILL lands exactly there.
PAUSING_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from gate.memory.store.files import write_memory
    from gate.memory.model import Memory

    point = sys.argv[2]

    def pause(where):
        if where == point:
            print(where, flush=True)
            while True:
                signal.pause()  # until the SIGKILL

    real_fdopen, real_fsync, real_replace = os.fdopen, os.fsync, os.replace

    class HalfThenRest:
        def __init__(self, handle):
            self.handle = handle
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.handle.__exit__(*exc)
        def write(self, data):
            half = len(data) // 2
            self.handle.write(data[:half])
            self.handle.flush()
            pause("half written")
            return self.handle.write(data[half:]) + half
        def __getattr__(self, name):
            return getattr(self.handle, name)

    def fsync(fd):
        import stat
        pause("before fsync" if stat.S_ISREG(os.fstat(fd).st_mode) else "before the directory's fsync")
        return real_fsync(fd)

    def replace(src, dst):
        pause("before rename")
        return real_replace(src, dst)

    os.fdopen = lambda *a, **k: HalfThenRest(real_fdopen(*a, **k))
    os.fsync, os.replace = fsync, replace
    write_memory(Path(sys.argv[1]), Memory(id="m-atom", kind="finding", title="new version", body="n" * 200_000),
                 private=True)
    print("finished", flush=True)
    """
)


@pytest.mark.parametrize("point, survivor", [
    ("half written", "old"), ("before fsync", "old"), ("before rename", "old"),
    ("before the directory's fsync", "new"),
])
def test_atomic_write_survives_a_crash_mid_write(tmp_path: Path, point: str, survivor: str) -> None:
    """SIGKILL a writer at each point of its write: the file is the old memory until the rename, the new one
    from then on, whole either way (never the half the writer had written)."""
    from support import HANG_S, hang_guard

    store_dir = tmp_path / "store"
    write_memory(store_dir, Memory(id="m-atom", kind="finding", title="old version", body="o" * 50_000), private=True)
    proc = subprocess.Popen([sys.executable, "-c", PAUSING_WRITER, str(store_dir), point], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        with hang_guard("the writer reaching its pause point"):
            reached = proc.stdout.readline().decode().strip()
        assert reached == point  # it is there now, paused: the kill lands mid-write, not before or after it
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=HANG_S)
    assert proc.returncode == -signal.SIGKILL
    memory = read_memory(store_dir / "m-atom.toml")
    expected = {"old": ("old version", 50_000), "new": ("new version", 200_000)}[survivor]
    assert (memory.title, len(memory.body)) == expected


def test_supersession_chain_resolves_to_live_head(gate) -> None:
    # The stale ones say "waterfall trigger" more often, so they outrank the head on BM25.
    first = remember(gate, "Waterfall trigger waterfall trigger fires at 30 days", "--kind", "decision",
                     "--body", "waterfall trigger waterfall trigger")
    second = remember(gate, "Waterfall trigger waterfall trigger moved to 45 days", "--kind", "decision",
                      "--supersedes", first, "--body", "waterfall trigger")
    head = remember(gate, "Reserve trigger is now 60 days overdue", "--kind", "decision", "--supersedes", second)
    code, out, _ = gate("search", "waterfall trigger", "--json")
    data = json.loads(out)
    ids = [hit["id"] for hit in data["hits"]]
    assert ids == [head]
    assert set(data["hits"][0]["superseding"]) == {first, second}
    _code, out, _ = gate("show", first, "--json")
    assert json.loads(out)["status"] == "superseded"


def test_forgotten_memories_never_return(gate) -> None:
    keep = remember(gate, "Celery workers need the broker URL from the env", "--kind", "finding")
    gone = remember(gate, "Celery beat runs on the scheduler host only", "--kind", "finding")
    code, _, _ = gate("forget", gone)
    assert code == 0
    ids, _ = search_ids(gate, "celery beat scheduler host")
    assert gone not in ids
    assert keep in search_ids(gate, "celery broker")[0]
    code, out, _ = gate("list", "--json")
    assert gone not in [m["id"] for m in json.loads(out)["memories"]]


def test_no_leakage_between_projects_sharing_vocabulary(tmp_path: Path, gate) -> None:
    a = tmp_path / "alpha"
    b = tmp_path / "beta"
    for root in (a, b):
        (root / ".git").mkdir(parents=True)
    code, out, _ = gate("remember", "Kafka consumer lag alert threshold is 5000", "--project", str(a))
    alpha_id = out.strip()
    code, out, _ = gate("remember", "Kafka consumer group is named billing", "--project", str(b))
    beta_id = out.strip()
    code, out, _ = gate("search", "kafka consumer", "--json", "--project", str(a))
    assert [h["id"] for h in json.loads(out)["hits"]] == [alpha_id]
    code, out, _ = gate("search", "kafka consumer lag threshold", "--json", "--project", str(b))
    assert [h["id"] for h in json.loads(out)["hits"]] == [beta_id]
    # Each project has its own store, so the searches above never meet the other's memory. The project check
    # is reached by a file of beta's that sits in alpha's store (copied by hand, restored into the wrong place):
    beta_file = Store.for_cwd(str(b)).locate(beta_id)
    alpha_store = Path(ProjectPaths.for_cwd(a).private_store)
    copied = alpha_store / beta_file.name
    a_key, b_key = ProjectPaths.for_cwd(a).key, ProjectPaths.for_cwd(b).key
    assert f'project = "{b_key}"' in beta_file.read_text()  # bound to beta's repository, not its path
    copied.write_text(beta_file.read_text().replace(f'project = "{b_key}"', f'project = "{a_key}"'))
    code, out, _ = gate("search", "kafka consumer group", "--json", "--project", str(a))
    assert beta_id in [h["id"] for h in json.loads(out)["hits"]]  # stamped as alpha's, it is alpha's memory
    copied.unlink()
    copied.write_bytes(beta_file.read_bytes())  # as beta wrote it: beta's memory, whatever store it sits in
    code, out, _ = gate("search", "kafka consumer group", "--json", "--project", str(a))
    assert [h["id"] for h in json.loads(out)["hits"]] == [alpha_id]
    copied.unlink()
    # user scope is shared by both projects
    code, out, _ = gate("remember", "Kafka brokers are on port 9093 with TLS", "--scope", "user", "--project", str(a))
    user_id = out.strip()
    _code, out, _ = gate("search", "kafka brokers port", "--json", "--project", str(b))
    assert user_id in [h["id"] for h in json.loads(out)["hits"]]


def test_related_appendix_ordering_and_cap(gate) -> None:
    hit = remember(gate, "Checkout service times out under load", "--kind", "finding")
    linked = {}
    for edge, title in [
        ("relates", "Load balancer keeps idle connections for 60 seconds"),
        ("contradicts", "Checkout latency was measured fine in staging"),
        ("caused_by", "Connection pool size is 5 per worker"),
        ("fixes", "Raised the pool to 20 per worker"),
        ("relates", "Grafana board for pool usage lives under infra"),
        ("relates", "Worker count is 8 per node"),
    ]:
        other = remember(gate, title, "--kind", "finding")
        code, _, err = gate("link", other, edge, hit)
        assert code == 0, err
        linked[other] = edge
    ids, related = search_ids(gate, "checkout service times out")
    assert ids == [hit]
    assert len(related) == 5
    order = ["supersedes", "fixes", "caused_by", "contradicts", "relates"]
    ranks = [order.index(r["edge"]) for r in related]
    assert ranks == sorted(ranks)
    assert [r["edge"] for r in related][:3] == ["fixes", "caused_by", "contradicts"]
    assert all(r["from"] == hit for r in related)


def test_secrets_are_refused_and_nothing_is_written(gate, project: Path) -> None:
    for text in [
        "deploy key AKIAIOSFODNN7EXAMPLE",
        "db is postgres://admin:s3cretpass@db.internal:5432/app",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "-----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA",
    ]:
        code, _out, err = gate("remember", "credential note", "--body", text)
        assert code == 2
        assert "secret" in err
        assert text not in err
    assert Store.for_cwd(str(project)).memories() == []
    ok = remember(gate, "The API token rotates every 30 days; password resets go through SSO")
    assert ok.startswith("m-")


def test_index_catches_up_after_hand_added_and_deleted_files(gate, project: Path) -> None:
    first = remember(gate, "Redis eviction policy is allkeys-lru", "--kind", "finding")
    team_dir = project / ".gate" / "memories"
    team_dir.mkdir(parents=True)
    # as `git pull` would bring it: a file appears in the team store
    (team_dir / "m-pulled.toml").write_text(
        'id = "m-pulled"\nkind = "decision"\ntitle = "Redis cluster mode is off for the session store"\n'
        'scope = "team"\nsource = "human"\n'
    )
    ids, _ = search_ids(gate, "redis session store cluster")
    assert "m-pulled" in ids
    (team_dir / "m-pulled.toml").unlink()
    ids, _ = search_ids(gate, "redis session store cluster")
    assert "m-pulled" not in ids
    assert first in search_ids(gate, "redis eviction")[0]


def test_hook_catches_up_on_directory_change_without_full_scan(project: Path) -> None:
    store = Store.for_cwd(str(project))
    store.remember(Memory(id="m-one", kind="finding", title="Alpha beta gamma"))
    index = store.index
    index.catch_up(wait_seconds=5)
    write_memory(Path(store.paths.private_store), Memory(id="m-two", kind="finding", title="Delta alpha"), private=True)
    assert "private" in index.stale_scopes()
    index.catch_up(wait_seconds=5)
    assert index.get("m-two") is not None


def test_reindex_reproduces_the_same_results(gate) -> None:
    for title in ["Pytest fixtures live in conftest at the root", "Fixture scope session breaks isolation",
                  "Conftest plugins load before collection"]:
        remember(gate, title)
    before = search_ids(gate, "conftest fixture scope")
    code, out, _ = gate("reindex")
    assert code == 0 and "indexed 3" in out
    assert search_ids(gate, "conftest fixture scope") == before
    code, out, _ = gate("reindex", "--check", "--json")
    assert code == 0 and json.loads(out)["consistent"] is True


def test_export_import_round_trip_keeps_ids_and_links(gate, tmp_path: Path) -> None:
    a = remember(gate, "Feature flags are read at boot only")
    b = remember(gate, "Restart pods after flipping a flag", "--link", f"caused_by:{a}", "--kind", "gotcha")
    code, exported, _ = gate("export")
    lines = exported.strip().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["id"] in {a, b} for line in lines)
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    code, out, err = gate("import", "-", "--project", str(other), stdin=exported)
    assert code == 0, err
    code, out, _ = gate("show", b, "--json", "--project", str(other))
    assert json.loads(out)["links"] == [{"type": "caused_by", "target": a}]
    code, exported_again, _ = gate("export", "--project", str(other))
    strip = [{k: v for k, v in json.loads(line).items() if k != "project"} for line in exported_again.splitlines()]
    assert strip == [{k: v for k, v in json.loads(line).items() if k != "project"} for line in lines]


def test_import_rejects_a_bad_line_and_imports_nothing(gate, project: Path) -> None:
    lines = [
        json.dumps({"id": "m-ok1", "kind": "finding", "title": "Good line"}),
        json.dumps({"id": "m-ok2", "kind": "nonsense", "title": "Bad kind"}),
    ]
    code, _, err = gate("import", "-", stdin="\n".join(lines))
    assert code == 2
    assert "line 2" in err and "unknown kind" in err
    assert Store.for_cwd(str(project)).memories() == []
    code, _, err = gate("import", "-", stdin="{not json\n")
    assert code == 2 and "line 1" in err


def test_import_fills_defaults(gate, project: Path) -> None:
    code, out, err = gate("import", "-", "--json", stdin=json.dumps({"kind": "finding", "title": "Minimal"}))
    assert code == 0, err
    (memory_id,) = json.loads(out)["ids"]
    code, out, _ = gate("show", memory_id, "--json")
    data = json.loads(out)
    assert data["scope"] == "private" and data["source"] == "agent" and data["status"] == "active"
    assert data["project"] == ProjectPaths.for_cwd(project).key


def test_body_from_stdin_and_json_output(gate) -> None:
    code, out, err = gate("remember", "Body comes from stdin", "--body", "-", "--json", stdin="line one\nline two\n")
    assert code == 0, err
    memory_id = json.loads(out)["id"]
    code, out, _ = gate("show", memory_id, "--json")
    assert json.loads(out)["body"] == "line one\nline two"


@pytest.mark.parametrize("command", [["list"], ["search", "anything"], ["show", "m-nothing"]])
def test_read_commands_have_json(gate, command: list[str]) -> None:
    code, out, err = gate(*command, "--json")
    if command[0] == "show":
        assert code == 3 and "no memory" in err
    else:
        assert code == 0
        json.loads(out)


def test_symlinked_memory_files_are_not_followed(gate, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('id = "m-link"\nkind = "finding"\ntitle = "Planted through a symlink"\n')
    team = project / ".gate" / "memories"
    team.mkdir(parents=True)
    (team / "m-link.toml").symlink_to(outside)
    ids, _ = search_ids(gate, "planted symlink")
    assert "m-link" not in ids


def test_a_successor_written_outside_gate_supersedes_without_a_reindex(gate, project: Path) -> None:
    old = remember(gate, "Deploy window is Tuesday mornings", "--kind", "decision")
    store = Store.for_cwd(str(project))
    # the successor's file alone (no second write marks the old one): the next catch-up derives it
    new = Memory(id="m-newwin", kind="decision", title="Deploy window moved to Thursday mornings",
                 links=[Link("supersedes", old)], project=str(project.resolve()))
    write_memory(Path(store.paths.private_store), new, private=True)
    code, out, _ = gate("show", old, "--json")
    assert json.loads(out)["status"] == "superseded"
    ids, _ = search_ids(gate, "deploy window mornings")
    assert ids == ["m-newwin"]


def test_hook_leaves_a_large_missing_index_to_a_background_build(gate, project: Path, monkeypatch) -> None:
    import shutil

    from support import HANG_S

    import gate.memory.index.read as index_module

    for n in range(8):
        remember(gate, f"Fact number {n} about the billing cron schedule")
    store = Store.for_cwd(str(project))
    shutil.rmtree(store.index.dir)  # e.g. the cache was cleared
    monkeypatch.setattr(index_module, "INLINE_BUILD_FILES", 5)
    started: list[subprocess.Popen] = []
    real_popen = subprocess.Popen

    def spy(*args, **kwargs) -> subprocess.Popen:  # the real process, kept so that the test can wait for it
        proc = real_popen(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", spy)
    index = index_module.MemoryIndex(store.paths)
    report = index.catch_up_for_hook()
    assert report.skipped_busy and not index.exists()  # the hook did not build it inline
    (builder,) = started
    assert builder.args == background_python("gate.memory.index.read", store.paths.root)  # this process's sys.path
    assert builder.wait(timeout=HANG_S) == 0  # its exit is the event; the timeout only turns a hang into a failure
    assert index.exists() and index.num_docs() == 8


def test_corrupt_files_are_listed_from_the_small_manifest(gate, project: Path) -> None:
    """Every command lists unreadable files; they are kept in dirs.json (small), and an index written by an
    earlier version (no such key) still answers from files.json."""
    paths = ProjectPaths.for_cwd(project)
    Path(paths.private_store).mkdir(parents=True)
    (Path(paths.private_store) / "m-broken.toml").write_text("this is [not toml")
    remember(gate, "Deploys go through the staging gate first", "--kind", "directive")
    store = Store.for_cwd(str(project))
    dirs_file = Path(store.index.dir) / "dirs.json"
    manifest = json.loads(dirs_file.read_text())
    assert [c[1] for c in manifest["corrupt"]] == ["m-broken.toml"]
    found = store.index.corrupt_files()
    del manifest["corrupt"]
    dirs_file.write_text(json.dumps(manifest))
    assert store.index.corrupt_files() == found and found[0][0].endswith("m-broken.toml")


def test_a_kept_searcher_sees_another_process_commit(gate, project: Path) -> None:
    """An index object keeps its searcher between reads, but never past a commit made by someone else."""
    from gate.memory.search import search

    remember(gate, "Deploys go through the staging gate first", "--kind", "directive")
    reader = Store.for_cwd(str(project))
    reader.catch_up()
    assert [h.id for h in search(reader.index, "payroll export format").hits] == []
    subprocess.run(
        [sys.executable, "-m", "gate.cli", "remember", "Payroll export uses the bank's fixed-width format",
         "--kind", "decision"],
        cwd=project, check=True, capture_output=True, timeout=60,
    )
    hits = search(reader.index, "payroll export format").hits  # no catch-up in between: the searcher renews
    assert len(hits) == 1 and "Payroll" in hits[0].record["title"]
