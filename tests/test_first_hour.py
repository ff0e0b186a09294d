"""The first hour of a new user (issue 23): each defect a newcomer met, as a test that failed before its fix."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import support

from gate.memory.store.store import Store
from gate.rules import load_rules

# --- a memory file repaired in place is picked up by the next read --------------------------------------------


def _settle(directory: Path, ns: int) -> None:
    """Give the store directory an mtime old enough to vouch for its listing (instead of waiting for it)."""
    os.utime(directory, ns=(ns, ns))


def _write_in_place(path: Path, payload: bytes, how: str) -> None:
    """Replace a file's bytes without replacing the file (same inode), as `cp` and many editors do."""
    if how == "cp":
        source = path.with_name(".source-" + path.name)  # a dot file: no store reader lists it
        source.write_bytes(payload)
        subprocess.run(["cp", str(source), str(path)], check=True)
        source.unlink()
    else:
        with open(path, "r+b") as handle:
            handle.truncate(0)
            handle.write(payload)


@pytest.mark.parametrize("how", ["rewrite", "cp"])
def test_a_file_repaired_in_place_is_found_again(how: str, gate, project: Path) -> None:
    if how == "cp" and shutil.which("cp") is None:
        pytest.skip("no cp on this system")
    for title in ("The ledger export runs nightly", "Ledger balances are reconciled weekly"):
        assert gate("remember", title)[0] == 0
    code, out, _ = gate("remember", "Ledger entries are immutable once posted")
    memory_id = out.strip()
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert path is not None
    store_dir = path.parent
    good = path.read_bytes()
    inode = path.stat().st_ino
    past = path.stat().st_mtime_ns - 60_000_000_000
    _settle(store_dir, past)
    assert memory_id in gate("search", "ledger", "immutable")[1]

    # Broken in place, the same size as the good file: a search notices (its signature moved) and warns.
    bad = good.replace(b"title = ", b"title ? ", 1)
    assert len(bad) == len(good) and bad != good
    _write_in_place(path, bad, how)
    broken_at = past + 30_000_000_000
    os.utime(path, ns=(broken_at, broken_at))
    _settle(store_dir, past)
    code, out, err = gate("search", "ledger", "immutable")
    assert memory_id not in out, out
    code, out, err = gate("search", "ledger", "immutable")  # the warning comes from what the last read saw
    assert memory_id not in out and "not valid TOML" in err, (out, err)

    # Repaired in place, and nothing a stat call sees moved: same inode, same size, same mtime, same directory.
    _write_in_place(path, good, how)
    os.utime(path, ns=(broken_at, broken_at))
    _settle(store_dir, past)
    info = path.stat()
    assert (info.st_ino, info.st_size, info.st_mtime_ns) == (inode, len(bad), broken_at)
    code, out, err = gate("search", "ledger", "immutable")
    assert code == 0
    assert memory_id in out, out
    assert "not valid TOML" not in err and "skipped" not in err
    code, out, err = gate("list")
    assert memory_id in out and "skipped" not in err


def test_a_hook_recalls_a_file_repaired_in_place(gate, project: Path) -> None:
    """The hooks catch up as the CLI does: the first read after the repair, a prompt, delivers the memory."""
    import json
    import sys

    code, out, _ = gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    memory_id = out.strip()
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert path is not None
    good, past = path.read_bytes(), path.stat().st_mtime_ns - 60_000_000_000
    _settle(path.parent, past)
    _write_in_place(path, good.replace(b"title = ", b"title ? ", 1), "rewrite")
    os.utime(path, ns=(past, past))
    _settle(path.parent, past)
    assert "not valid TOML" in gate("list")[2]
    _write_in_place(path, good, "rewrite")
    os.utime(path, ns=(past, past))
    _settle(path.parent, past)
    event = {"session_id": "sess-repaired", "transcript_path": str(project / "missing.jsonl"), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit", "prompt": "When does the reserve account waterfall trigger?"}
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0
    assert memory_id in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


# --- `gate search` says what the relevance cliff hid, and --all shows it ----------------------------------------
LEDGER = [  # (title, body): the third names the ledger in its body alone, far below the best score
    ("Ledger rows are append-only", ""),
    ("Month-end close reconciles the general ledger against the bank statements for every subsidiary", ""),
    ("The nightly export writes a CSV per account to the reports bucket", "It reads the ledger at 02:00 UTC"),
]


def _ledger_store(gate) -> set[str]:
    ids = set()
    for title, body in LEDGER:
        code, out, err = gate("remember", title, *(["--body", body] if body else []))
        assert code == 0, err
        ids.add(out.strip())
    for title in ("Use pytest for new tests", "Deploys need approval from the release manager"):
        assert gate("remember", title)[0] == 0
    return ids


def test_search_says_how_many_matches_the_cliff_hid(gate) -> None:
    ledger = _ledger_store(gate)
    code, out, _ = gate("search", "--limit", "10", "ledger")
    assert code == 0
    shown = {line.split(" · ")[0] for line in out.splitlines() if line.startswith("m-")}
    assert shown < ledger  # the cliff cuts at least one of the three (a plain search still ranks the best)
    hidden = len(ledger - shown)
    noun = "match" if hidden == 1 else "matches"
    ratio = float(load_rules("search")["cut"]["cliff_ratio"])
    assert f"{hidden} more {noun} below the relevance cliff (under {ratio:.0%} of the best score): `--all` shows" in out

    code, out, _ = gate("search", "--limit", "10", "--all", "ledger")
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("m-")]
    assert {line.split(" · ")[0] for line in lines} == ledger
    assert sum(line.endswith("[below the cliff]") for line in lines) == hidden
    assert "relevance cliff" not in out  # nothing is hidden any more


def test_search_json_counts_the_hidden_and_all_marks_them(gate) -> None:
    import json

    ledger = _ledger_store(gate)
    data = json.loads(gate("search", "--limit", "10", "--json", "ledger")[1])
    shown = {hit["id"] for hit in data["hits"]}
    assert shown < ledger
    assert data["hidden"] == {"below_cliff": len(ledger - shown), "over_limit": 0, "few_terms": 0}
    data = json.loads(gate("search", "--limit", "10", "--json", "--all", "ledger")[1])
    assert {hit["id"] for hit in data["hits"]} == ledger
    assert {hit["id"] for hit in data["hits"] if hit.get("below_cliff")} == ledger - shown
    assert data["hidden"] == {"below_cliff": 0, "over_limit": 0, "few_terms": 0}


def test_search_says_how_many_matches_the_limit_left_out(gate) -> None:
    ledger = _ledger_store(gate)
    code, out, _ = gate("search", "--limit", "1", "--all", "ledger")
    assert code == 0
    assert len([line for line in out.splitlines() if line.startswith("m-")]) == 1
    assert f"{len(ledger) - 1} more matches past the first 1 not shown: `--limit N` shows more" in out


# --- two stray non-UTF-8 bytes on a hook's stdin cost two characters, not the event -----------------------------
def test_stray_bytes_on_the_hook_stdin_are_repaired_and_the_prompt_recalls(gate, project: Path) -> None:
    import json
    import sys

    from gate.paths import audit_log_file

    code, out, err = gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    assert code == 0, err
    memory_id = out.strip()
    event = {"session_id": "sess-bytes", "transcript_path": str(project / "missing.jsonl"), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger? (asked at the cafeE, donQt know)"}
    raw = json.dumps(event).encode("utf-8").replace(b"cafeE", b"caf\xe9").replace(b"donQt", b"don\x92t")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # what a Latin-1 or cp1252 paste leaves: one stray byte each
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=raw, capture_output=True, timeout=60)
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert memory_id in data["hookSpecificOutput"]["additionalContext"]
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    mine = [r for r in records if r.get("session") == "sess-bytes"]
    assert mine and all(r["decision"] != "failed_open" for r in mine), mine


# --- identifiers and numbers that differ make two facts -------------------------------------------------------------
def _shard_title(worker: int, note: int) -> str:
    return f"Worker {worker} note {note}: shard zeta{worker}x{note} rebalances after the quorum timeout"


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        (_shard_title(1, 1), _shard_title(1, 10)),  # refused at similarity 1.0 before
        (_shard_title(0, 1), _shard_title(1, 0)),  # zeta0x1 / zeta1x0, refused at 0.86
        ("Worker 1 note 1: the shard rebalances after the quorum timeout",
         "Worker 1 note 10: the shard rebalances after the quorum timeout"),  # "note 10" vs "note 1"
        ("Worker 2 note 1: the shard rebalances after the quorum timeout",
         "Worker 1 note 2: the shard rebalances after the quorum timeout"),  # the same numbers on other words
        ("Shard zeta1x1 rebalances after the quorum timeout", "Shard zeta1x10 rebalances after the quorum timeout"),
        ("Shard zeta0x1 rebalances after the quorum timeout", "Shard zeta1x0 rebalances after the quorum timeout"),
    ],
)
def test_other_identifiers_and_numbers_make_two_facts(existing: str, new: str, gate) -> None:
    from gate.memory.store import duplicates

    assert duplicates.compare(existing, new).distinct in ("other numbers", "other identifiers")
    assert duplicates.compare(new, existing).distinct in ("other numbers", "other identifiers")
    assert gate("remember", existing)[0] == 0
    code, _, err = gate("remember", new)
    assert code == 0, err


def test_a_grid_of_numbered_titles_is_all_distinct() -> None:
    from gate.memory.store import duplicates

    titles = [_shard_title(worker, note) for worker in range(6) for note in range(15)]
    same = [(a, b) for i, a in enumerate(titles) for b in titles[i + 1:] if duplicates.compare(a, b).duplicate(0.7)]
    assert same == []


WRITER = r'''
import io, json, sys
from contextlib import redirect_stderr, redirect_stdout
from gate.cli import main
import gate.commands.remember, gate.memory.store.store, gate.memory.store.duplicates  # imported before the go
worker, notes, project = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
print("ready", flush=True)  # wait with the others for the go (tests/support.py start_together)
sys.stdin.readline()
codes = []
for note in range(notes):
    title = f"Worker {worker} note {note}: shard zeta{worker}x{note} rebalances after the quorum timeout"
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        codes.append([title, main(["remember", title, "--project", project]), err.getvalue()[-300:]])
print(json.dumps(codes))
'''


@pytest.mark.slow
def test_ninety_concurrent_writes_of_numbered_titles_are_none_refused(project: Path) -> None:
    import json
    import sys

    workers, notes = 6, 15
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(w), str(notes), str(project)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE) for w in range(workers)]
    support.start_together(procs)
    results = [row for proc in procs for row in json.loads(proc.communicate(timeout=600)[0].splitlines()[-1])]
    assert len(results) == workers * notes
    refused = [(title, err) for title, code, err in results if code != 0]
    assert refused == []
    stored = {m.title for m in Store.for_cwd(str(project)).memories()}
    assert stored == {title for title, _, _ in results}


# --- gate remember: a fact is more than a word; who typed it is recorded; --help shows the defaults ----------------
@pytest.mark.parametrize("title", ["x", "deploys", "  Deploys  ", "v2", "#"])
def test_a_word_is_not_a_fact(title: str, gate, project: Path) -> None:
    code, out, err = gate("remember", title)
    assert code == 2
    words = 0 if title == "#" else 1
    assert (f"gate: error: not a fact: the title has {words} word{'' if words == 1 else 's'}, a fact needs at least "
            "2 (the thing and what holds of it); nothing was written") in err
    assert title.strip() not in err.replace("Deploys need", "")  # never quoted back (it may be a pasted secret)
    assert 'hint: write the fact itself as one line, e.g. gate remember "Deploys need approval' in err
    assert out == "" and Store.for_cwd(str(project)).memories() == []


def test_a_word_with_a_body_is_not_a_fact_either(gate, project: Path) -> None:
    code, _, err = gate("remember", "x", "--body", "the deploy needs the release manager's approval")
    assert code == 2 and "the body only details the fact the title states" in err
    assert Store.for_cwd(str(project)).memories() == []


@pytest.mark.parametrize("title", ["Deploys need approval", "数据库连接池上限五十", "CI: flaky"])
def test_two_words_make_a_fact(title: str, gate) -> None:
    code, out, err = gate("remember", title)
    assert code == 0, err


def test_remember_help_shows_the_default_kind_and_scope(gate) -> None:
    code, out, _ = gate("remember", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "--kind {directive,gotcha,finding,decision,fix,task,preference,reference} default: finding" in flat
    assert "--scope {private,team,user} default: private" in flat
    assert "Store one fact: a finding in the private store unless --kind and --scope say otherwise." in flat
    code, out, _ = gate("--help")
    assert "store a memory (prints its id; a finding, private, unless --kind/--scope)" in " ".join(out.split())


def _remember_at(project: Path, title: str, *, terminal: str, env: dict[str, str]) -> str:
    """`gate remember` in a process of its own whose stdin and stdout are a terminal (a pty: terminal="both"),
    stdin only ("stdin": `gate remember … | jq`), or pipes ("none"); the source it recorded."""
    import json
    import sys

    argv = [sys.executable, "-m", "gate.cli", "remember", title, "--project", str(project), "--json"]
    full_env = {**os.environ, **env}
    if terminal == "none":
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=full_env)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout
    else:
        import pty

        leader, follower = pty.openpty()
        output = follower if terminal == "both" else subprocess.PIPE
        proc = subprocess.Popen(argv, stdin=follower, stdout=output, stderr=output, env=full_env)
        os.close(follower)
        chunks = []
        while terminal == "both":
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the follower side closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        if terminal == "stdin":
            piped, _ = proc.communicate(timeout=60)
            chunks.append(piped)
        os.close(leader)
        assert proc.wait(timeout=60) == 0, b"".join(chunks)
        out = b"".join(chunks).decode()
    memory_id = json.loads(out.strip().splitlines()[-1])["id"]
    return Store.for_cwd(str(project)).get(memory_id).source


def test_a_memory_typed_at_a_terminal_is_recorded_as_written_by_a_human(project: Path) -> None:
    bare = {name: "" for name in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "GEMINI_CLI")}
    assert _remember_at(project, "Typed at a terminal by a person", terminal="both", env=bare) == "human"
    assert _remember_at(project, "Typed by a person and piped to jq", terminal="stdin", env=bare) == "human"
    # Claude Code's Bash tool: CLAUDECODE=1 and no terminal (measured on the CLI); either one says agent
    agent = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "a-session"}
    assert _remember_at(project, "Written from the Bash tool of an agent", terminal="none", env=agent) == "agent"
    assert _remember_at(project, "Written at a terminal inside Claude Code", terminal="both", env=agent) == "agent"
    assert _remember_at(project, "Written by a script without a terminal", terminal="none", env=bare) == "agent"


def test_an_explicit_source_wins(gate, project: Path) -> None:
    code, out, _ = gate("remember", "Marked by hand as a person's", "--human")
    assert Store.for_cwd(str(project)).get(out.strip()).source == "human"
    code, out, _ = gate("remember", "Marked by hand as an agent's", "--agent")
    assert Store.for_cwd(str(project)).get(out.strip()).source == "agent"


# --- gate import: the refusal line is a whole sentence ------------------------------------------------------------
def _auto_memory_dir(project: Path) -> Path:
    key = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in str(project.resolve()))
    return Path.home() / ".claude" / "projects" / key / "memory"


@pytest.mark.parametrize("dry_run", [False, True])
def test_import_says_what_became_of_the_rest(dry_run: bool, gate, project: Path, monkeypatch) -> None:
    from auto_memory_sample import BAD_FILES, TOPIC_FILES, write_bad_files, write_sample

    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_REMOTE_MEMORY_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
                 "CLAUDE_CODE_PROJECT_DIR_NAME"):
        monkeypatch.delenv(name, raising=False)
    directory = write_sample(_auto_memory_dir(project))
    write_bad_files(directory)
    code, _, err = gate("import", "--from", "claude-memory", *(["--dry-run"] if dry_run else []))
    assert code == 1
    verb = "would be imported" if dry_run else "were imported"
    line = f"gate: {len(BAD_FILES)} cannot be imported (reasons above); of the others, {len(TOPIC_FILES)} {verb}"
    assert line in err.splitlines(), err
    if dry_run:
        return
    code, _, err = gate("import", "--from", "claude-memory")  # again: the good ones are there already
    assert code == 1
    line = (f"gate: {len(BAD_FILES)} cannot be imported (reasons above); of the others, {len(TOPIC_FILES)} were "
            "imported before")
    assert line in err.splitlines(), err


# --- gate list: an empty filter says so, with the total -------------------------------------------------------------
def test_list_of_a_kind_the_store_lacks_says_so_with_the_total(gate) -> None:
    assert gate("list")[1].strip() == 'no memories yet — `gate remember "<fact>"` stores one'
    for title in ("Deploys need approval", "The ledger export runs nightly"):
        assert gate("remember", title)[0] == 0
    code, out, _ = gate("list", "--kind", "task")
    assert code == 0 and out.strip() == "no active task memories (2 memories in all)"
    assert gate("list", "--kind", "task", "--status", "all")[1].strip() == "no task memories (2 memories in all)"
    assert gate("list", "--scope", "team")[1].strip() == "no active memories in the team store (2 memories in all)"
    assert gate("list", "--status", "forgotten")[1].strip() == "no forgotten memories (2 memories in all)"


# --- gate forget: a second one writes nothing ------------------------------------------------------------------------
def test_a_second_forget_writes_no_version(gate, project: Path) -> None:
    import json

    code, out, _ = gate("remember", "Deploys need approval from the release manager")
    memory_id = out.strip()
    assert gate("forget", memory_id) == (0, f"forgot {memory_id}\n", "")
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert path is not None
    before = path.read_bytes()
    versions = json.loads(gate("show", "--history", memory_id, "--json")[1])["versions"]
    assert len(versions) == 1
    code, out, _ = gate("forget", memory_id)
    assert code == 0
    assert out.startswith(f"{memory_id} was already forgotten; nothing changed")
    assert path.read_bytes() == before
    assert json.loads(gate("show", "--history", memory_id, "--json")[1])["versions"] == versions
    Store.for_cwd(str(project)).forget(memory_id)  # the store itself writes nothing either
    assert path.read_bytes() == before
    assert json.loads(gate("show", "--history", memory_id, "--json")[1])["versions"] == versions


# --- gate show: a link reads naturally from both ends ----------------------------------------------------------------
def test_show_names_each_link_from_both_ends(gate) -> None:
    from gate.commands.show import LINK_NAMES, REVERSE_LINK_NAMES
    from gate.memory.vocab import LINK_TYPES

    assert set(LINK_NAMES) == set(REVERSE_LINK_NAMES) == set(LINK_TYPES)
    target = gate("remember", "The nightly export times out on large accounts")[1].strip()
    linkers = {}
    for link_type, title in [("fixes", "Export batches accounts in pages of 500"),
                             ("caused_by", "Reports arrive late on the first of the month"),
                             ("contradicts", "The nightly export never times out"),
                             ("relates", "Large accounts have over a million ledger rows")]:
        code, out, err = gate("remember", title, "--link", f"{link_type}:{target}", "--new")
        assert code == 0, err
        linkers[link_type] = out.strip()
    successor = gate("remember", "The nightly export streams large accounts", "--supersedes", target)[1].strip()
    code, out, _ = gate("show", target)
    assert code == 0
    assert f"fixed by: {linkers['fixes']} (Export batches accounts in pages of 500)" in out
    assert f"causes: {linkers['caused_by']} (Reports arrive late on the first of the month)" in out
    assert f"contradicted by: {linkers['contradicts']} (The nightly export never times out)" in out
    assert f"related from: {linkers['relates']} (Large accounts have over a million ledger rows)" in out
    assert f"superseded by: {successor} (The nightly export streams large accounts)" in out
    assert " by: " not in out.replace("fixed by: ", "").replace("contradicted by: ", "").replace(
        "superseded by: ", "")
    code, out, _ = gate("show", linkers["caused_by"])
    assert f"caused by: {target}" in out
    assert f"relates to: {target}" in gate("show", linkers["relates"])[1]
