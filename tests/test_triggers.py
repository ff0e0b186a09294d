"""Trigger specs: parsing, validation, glob semantics (`**` above all), time windows, and the cue table."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import HANG_S, hang_guard

from gate.errors import ValidationError
from gate.gates.delivery import anchors
from gate.memory.cues import globs, shards
from gate.memory.cues import load as cue_table
from gate.memory.cues import triggers as trig
from gate.memory.model import Memory
from gate.paths import ProjectPaths, background_python
from gate.rules import load_rules


def matches(glob: str, path: str) -> bool:
    return bool(re.fullmatch(globs.glob_regex(globs.normalize_glob(glob)), path))


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("src/payments/**", "src/payments/ledger.py", True),
        ("src/payments/**", "src/payments/a/b/c.py", True),
        ("src/payments/**", "src/payments", True),  # ** also matches no segment at all
        ("src/payments/**", "src/paymentsx/a.py", False),
        ("src/payments/**", "src/payments.py", False),
        ("src/payments/", "src/payments/ledger.py", True),  # a trailing slash means the whole directory
        ("src/payments", "src/payments/ledger.py", True),  # so does a plain directory name
        ("src/payments/ledger.py", "src/payments/ledger.py", True),
        ("src/payments/ledger.py", "src/payments/ledger.pyc", False),
        ("**/*.sql", "schema.sql", True),
        ("**/*.sql", "db/migrations/001.sql", True),
        ("**/*.sql", "db/migrations/001.sql.bak", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/a_test.py", False),
        ("*.py", "setup.py", True),
        ("*.py", "src/setup.py", False),  # globs are anchored at the project root: * stays in one segment
        ("src/*/models.py", "src/app/models.py", True),
        ("src/*/models.py", "src/app/sub/models.py", False),
        ("src/?.py", "src/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("src/[ab].py", "src/b.py", True),
        ("src/[!ab].py", "src/c.py", True),
        ("src/[!ab].py", "src/a.py", False),
        ("./src/**/**/x.py", "src/x.py", True),
        ("**", "anything/at/all", True),
        ("a.b+c/(x).py", "a.b+c/(x).py", True),  # regex characters are literal
        ("a.b+c/(x).py", "aXb+c/(x).py", False),
    ],
)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    assert matches(glob, path) is expected


@pytest.mark.parametrize(
    ("glob", "static"),
    [("src/payments/**", "src/payments"), ("**/*.sql", ""), ("src/*/db.py", "src"), ("src/db.py", "src/db.py")],
)
def test_static_dir(glob: str, static: str) -> None:
    assert globs.static_dir(glob) == static


@pytest.mark.parametrize(
    ("glob", "directory", "expected"),
    [
        ("src/payments/**", "src/payments", True),
        ("src/payments/**", "src/payments/sub", True),
        ("src/payments/**", "src/api", False),
        ("src/*/models.py", "src/app", True),
        ("src/*/models.py", "src/app/deeper", False),
        ("**/*.sql", "db/migrations", True),
    ],
)
def test_could_contain(glob: str, directory: str, expected: bool) -> None:
    assert globs.could_contain(glob, directory) is expected


def test_parse_clauses_and_conjunction() -> None:
    t = trig.parse("path:src/db/**,event:pre-edit,expires:2027-01-01,cooldown:1h30m")
    assert (t.paths, t.event, t.cooldown) == (["src/db/**"], "pre-edit", 5400.0)
    assert t.expires == trig.parse_time("2027-01-01T00:00:00Z")
    assert t.channel == trig.CHANNEL_TOOL and t.has_cue
    # a comma inside a regex stays in it: only ",name:" starts a clause
    t = trig.parse(r"command:psql -c 'select a, b from t{1,3}',cooldown:2h")
    assert t.commands == [r"psql -c 'select a, b from t{1,3}'"] and t.cooldown == 7200
    assert trig.parse("keyword:reserve  account").keywords == ["reserve account"]
    assert trig.parse("keyword:invoice").channel == trig.CHANNEL_PROMPT
    assert trig.parse("event:post-compaction").channel == trig.CHANNEL_COMPACT
    modifier_only = trig.parse("expires:2027-01-01")
    assert not modifier_only.has_cue and modifier_only.channel is None


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "path:",
        "path:/abs/x",
        "path:C:/x",
        "path:../x",
        "path:src/{a,b}/x",
        "nope:x",
        "src/**",
        "event:lunch",
        "event:prompt,event:pre-run",
        "command:(",
        "path:a,command:b",
        "path:a,keyword:b",
        "keyword:x,event:pre-run",
        "path:a,event:session-start",
        "command:x,event:pre-edit",
        "keyword:!!!",
        "expires:2027-02-30",
        "expires:tomorrow",
        "expires:+30d",  # relative dates only at write time (normalize)
        "cooldown:soon",
        "not-before:2027-06-01,expires:2027-01-01",
        "expires:2027-01-01,expires:2028-01-01",
        "path:a\nb",
    ],
)
def test_invalid_specs_are_refused_with_a_hint(spec: str) -> None:
    with pytest.raises(ValidationError) as raised:
        trig.parse(spec)
    assert raised.value.hint


@pytest.mark.parametrize(
    ("pattern", "needs", "command", "matches"),
    [
        (r"alembic\s+(upgrade|downgrade)", ["alembic", False], "cd db && alembic  upgrade head", True),
        (r"(?i)drop\s+table", ["table", True], "psql -c 'DROP TABLE users'", True),
        (r"deploy-12\b", ["deploy-12", False], "make deploy-123", False),
        (r"x?yz", ["yz", False], "yz", True),
        (r"a|bc", None, "bc", True),  # an alternation promises no literal
        (r"(?i)straße", None, "STRASSE", False),  # non-ASCII under IGNORECASE: no shortcut
    ],
)
def test_command_regexes_are_prefiltered_by_a_literal_they_need(
    pattern: str, needs: list | None, command: str, matches: bool
) -> None:
    assert trig.required_literal(pattern) == needs
    assert bool(re.search(pattern, command)) is matches
    # the anchors gate's own matcher, prefilter included, agrees with the regex (the hook-level check of the
    # same cases is in test_anchors.py)
    touch = anchors.Touch("Bash")
    touch.command = command
    tools = load_rules("triggers")["tools"]
    assert anchors._tool_match(trig.parse(f"command:{pattern}").to_json(), touch, tools) is matches


def test_times_and_windows() -> None:
    assert trig.parse_time("2027-01-01") == 1798761600.0
    assert trig.parse_time("2027-01-01T01:30+01:00") == 1798761600.0 + 1800  # 00:30 UTC
    assert trig.parse_duration("2w") == 14 * 86400
    t = trig.parse("path:x,not-before:2027-01-01,expires:2028-01-01")
    assert t.window_state(trig.parse_time("2026-12-31")) == "not_yet"
    assert t.window_state(trig.parse_time("2027-06-01")) == "open"
    assert t.window_state(trig.parse_time("2028-01-01")) == "expired"
    assert trig.window_state(t.to_json(), trig.parse_time("2027-06-01")) == "open"


def test_normalize_resolves_relative_dates_and_canonical_globs() -> None:
    now = trig.parse_time("2026-01-01")
    assert trig.normalize("path:./src//db/,expires:+30d", now) == "path:src/db/**,expires:2026-01-31T00:00:00Z"
    assert trig.normalize("command:alembic, upgrade", now) == "command:alembic, upgrade"


def test_memory_validate_refuses_a_bad_trigger() -> None:
    Memory(id="m-abc123", kind="gotcha", title="t", triggers=["path:src/**"]).validate()
    with pytest.raises(ValidationError):
        Memory(id="m-abc123", kind="gotcha", title="t", triggers=["path:src/**,command:x"]).validate()


def _write(store: Path, memory_id: str, kind: str, **fields: object) -> None:
    from gate.memory.store.files import write_memory

    write_memory(store, Memory(id=memory_id, kind=kind, title=f"title {memory_id}", **fields), private=True)


def test_cue_table_holds_what_can_fire_and_follows_the_store(project: Path) -> None:
    paths = ProjectPaths.for_cwd(project)
    defaults = {"gotcha": ["paths"], "directive": ["event:session-start"], "preference": ["event:session-start"],
                "decision": ["event:session-start"]}
    store = Path(paths.private_store)
    _write(store, "m-gotcha", "gotcha", paths=["src/db/**"])
    _write(store, "m-plain", "finding", paths=["src/db/**"])  # findings do not fire on paths by default
    _write(store, "m-cmd", "finding", triggers=["command:make deploy,cooldown:1h"])
    _write(store, "m-dir", "directive")  # standing: the session-start gate has it from the index
    _write(store, "m-pref", "preference")  # standing too, like directives (issue 21)
    _write(store, "m-dec", "decision")  # not standing: its kind's default cue puts it in the table
    _write(store, "m-old", "gotcha", paths=["src/db/**"], status="forgotten")
    _write(store, "m-root", "gotcha", triggers=["path:**/*.sql"])
    # a file the index would skip as corrupt (unknown field) does not fire either
    (store / "m-bad.toml").write_text('id = "m-bad"\nkind = "gotcha"\ntitle = "t"\npaths = ["src/db/**"]\ncolour = 1\n')

    def ids(found: list) -> set[str]:
        return {memory_id for memory_id, _, _ in found}

    table = cue_table.load(paths, defaults)
    assert ids(table.path_triggers("src/db/models.py")) == {"m-gotcha", "m-root"}
    assert ids(table.path_triggers("src/db", with_root=False)) == {"m-gotcha"}
    assert ids(table.path_triggers("src/api/views.py")) == {"m-root"}
    assert ids(table.commands(lambda trigger: True)) == {"m-cmd"}
    assert ids(table.event("session-start")) == {"m-dec"}
    head = json.loads((Path(shards.table_dir(paths)) / "head.json").read_text())
    assert head["files"] == 9
    # a new memory shows up on the next load (the directory changed); a changed default rebuilds the table
    _write(store, "m-new", "gotcha", triggers=["path:docs/**,expires:2020-01-01"])
    table = cue_table.load(paths, defaults)
    assert ids(table.path_triggers("docs/a.md")) == {"m-new", "m-root"}
    assert table.withheld(time.time()) == {"m-new"}
    table = cue_table.load(paths, {**defaults, "finding": ["paths"]})
    assert ids(table.path_triggers("src/db/models.py")) == {"m-gotcha", "m-plain", "m-root"}
    # forgetting removes it, and its shard when it was the last one there
    (store / "m-new.toml").unlink()
    table = cue_table.load(paths, defaults)
    assert ids(table.path_triggers("docs/a.md")) == {"m-root"}
    assert not (Path(shards.table_dir(paths)) / shards.shard_name("docs")).exists()


@pytest.fixture
def large_store(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ProjectPaths, dict[str, list[str]]]:
    """A store the hook may not rebuild itself (every store counts as large), holding one path gotcha."""
    paths = ProjectPaths.for_cwd(project)
    rules = load_rules("triggers", project)
    _write(Path(paths.private_store), "m-gotcha", "gotcha", paths=["src/db/**"])
    # written a minute ago: a directory changed in the last moments is rescanned on the next call anyway
    written = time.time_ns() - 60 * 1_000_000_000
    os.utime(paths.private_store, ns=(written, written))
    monkeypatch.setattr(shards, "INLINE_FILES", 0)
    return paths, shards.defaults_from(rules)  # the defaults the detached builder reads for itself


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[subprocess.Popen, dict]]:
    """Every process started through subprocess.Popen, started for real: a spy, not a stub."""
    started: list[tuple[subprocess.Popen, dict]] = []
    real = subprocess.Popen

    def spy(*args: object, **kwargs: object) -> subprocess.Popen:
        proc = real(*args, **kwargs)  # type: ignore[call-overload]
        started.append((proc, kwargs))
        return proc

    monkeypatch.setattr(subprocess, "Popen", spy)
    return started


def hold_build_lock(paths: ProjectPaths) -> int:
    """Take the cue table's build lock as a running builder holds it; close the descriptor to release."""
    directory = Path(shards.table_dir(paths))
    directory.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(directory / "build.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    return lock_fd


def fired(paths: ProjectPaths, defaults: dict[str, list[str]]) -> list[str]:
    return [m for m, _, _ in cue_table.load(paths, defaults).path_triggers("src/db/x.py")]


def test_a_large_store_is_rebuilt_by_a_detached_process(
    large_store: tuple[ProjectPaths, dict[str, list[str]]], spawned: list[tuple[subprocess.Popen, dict]]
) -> None:
    paths, defaults = large_store
    head = Path(shards.table_dir(paths)) / "head.json"
    # while a builder holds the lock, a tool call starts no other one
    lock_fd = hold_build_lock(paths)
    try:
        assert fired(paths, defaults) == []
    finally:
        os.close(lock_fd)
    assert spawned == [] and not head.exists()
    # no table yet and none running: the hook starts one and goes on without waiting
    assert fired(paths, defaults) == []
    assert len(spawned) == 1, "no builder started"
    (builder, options), = spawned
    assert builder.args == background_python("gate.memory.cues.build", paths.root)  # this process's sys.path
    assert os.getsid(builder.pid) == builder.pid  # its own session: a hook timeout does not take it down
    for stream in ("stdin", "stdout", "stderr"):  # Claude Code waits for the hook's stdout to close
        assert options[stream] == subprocess.DEVNULL
    assert builder.wait(timeout=HANG_S) == 0  # its exit is the event; the timeout only guards a hang
    assert head.exists()
    assert fired(paths, defaults) == ["m-gotcha"]
    assert len(spawned) == 1  # built: the next call reads the shards, starts nothing


def blocked_on(lock: Path, pid: int) -> bool:
    """Whether process `pid` waits for a lock on the file `lock` (Linux: blocked requests in /proc/locks)."""
    inode = os.stat(lock).st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "->" and fields[5] == str(pid) and fields[6].endswith(f":{inode}"):
            return True
    return False


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="seeing a process wait for a lock needs /proc/locks")
def test_the_detached_builder_waits_for_a_builder_at_work(
    large_store: tuple[ProjectPaths, dict[str, list[str]]]
) -> None:
    paths, defaults = large_store
    head = Path(shards.table_dir(paths)) / "head.json"
    lock_fd = hold_build_lock(paths)
    try:
        builder = subprocess.Popen([sys.executable, "-m", "gate.memory.cues.build", paths.root])
        # the event: the kernel lists the builder's request as blocked on the lock (polled; the guard only turns
        # a builder that never gets there into a failure)
        with hang_guard("the builder reaching the build lock"):
            while not blocked_on(Path(shards.table_dir(paths)) / "build.lock", builder.pid):
                assert builder.poll() is None, "the builder ran while another held the lock"
                time.sleep(0.02)
        assert not head.exists()
    finally:
        os.close(lock_fd)
    assert builder.wait(timeout=HANG_S) == 0
    assert fired(paths, defaults) == ["m-gotcha"]


def test_a_store_that_grew_past_the_inline_size_is_not_rebuilt_in_the_hook(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table built when the store was small, then a large import (or pull): the table's old file count
    must not decide, or the first hook rebuilds the whole store inline (11.6 s after 20,000 imported)."""
    from gate.memory.cues import build as cue_build

    paths = ProjectPaths.for_cwd(project)
    defaults = shards.defaults_from(load_rules("triggers", project))
    store = Path(paths.private_store)
    _write(store, "m-gotcha", "gotcha", paths=["src/db/**"])
    assert [m for m, _, _ in cue_table.load(paths, defaults).path_triggers("src/db/x.py")] == ["m-gotcha"]
    monkeypatch.setattr(shards, "INLINE_FILES", 3)
    for number in range(5):
        _write(store, f"m-more-{number}", "gotcha", paths=["src/db/**"])
    inline: list[str] = []
    started: list[str] = []
    monkeypatch.setattr(cue_build, "rebuild", lambda p, d: inline.append(p.root) or {})
    monkeypatch.setattr(cue_build, "spawn_rebuild", lambda p: started.append(p.root))
    table = cue_table.load(paths, defaults)
    assert inline == [], "the hook rebuilt a large store itself"
    assert started == [paths.root]
    assert [m for m, _, _ in table.path_triggers("src/db/x.py")] == ["m-gotcha"]  # the old shards answer
