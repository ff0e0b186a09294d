"""`gate import --from claude-memory` and `--from claude-md` (issue 16): finding Claude Code's auto memory the way
Claude Code does, the type mapping, provenance, re-runs, dry runs, and bad input file by file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from auto_memory_sample import BAD_FILES, TOPIC_FILES, write_bad_files, write_sample

from gate import claude_code
from gate.importers.frontmatter import FrontMatterError, split
from gate.memory.store.store import Store
from gate.paths import ProjectPaths


@pytest.fixture(autouse=True)
def claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_REMOTE_MEMORY_DIR", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
                 "CLAUDE_CODE_PROJECT_DIR_NAME"):
        monkeypatch.delenv(name, raising=False)


def default_memory_dir(project: Path) -> Path:
    key = "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in str(project.resolve()))
    return Path.home() / ".claude" / "projects" / key / "memory"


def store_of(project: Path) -> Store:
    return Store(ProjectPaths.for_cwd(project))


def imported(gate, *args: str) -> tuple[int, dict, str]:
    code, out, err = gate("import", "--json", *args)
    return code, json.loads(out), err


def by_source(report: dict) -> dict[str, dict]:
    return {item["source"]: item for item in report["items"]}


# --- where Claude Code keeps it ---------------------------------------------------------------------------------


def test_project_key_is_claude_codes_path_encoding() -> None:
    assert claude_code.project_key("/home/dev/src/app.v2_new") == "-home-dev-src-app-v2-new"
    assert claude_code.project_key("/tmp/a b/ü") == "-tmp-a-b--"
    assert claude_code.project_key("/x/\U0001f600") == "-x---"  # one astral character is two UTF-16 units
    long = "/" + "a" * 250
    key = claude_code.project_key(long)
    assert key.startswith("-" + "a" * 199 + "-") and len(key) > 201
    assert key.endswith("-" + claude_code._base36(claude_code._js_string_hash(long)))


def test_the_hash_of_a_cut_key_is_javas_string_hash_made_positive() -> None:
    assert claude_code._js_string_hash("hello") == 99162322  # "hello".hashCode()
    assert claude_code._js_string_hash("polygenelubricants") == 2**31  # hashCode() is Integer.MIN_VALUE
    assert claude_code._base36(99162322) == "1n1e4y"


def git(*args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], check=True, capture_output=True, env=env)


def test_default_directory_is_keyed_by_the_git_root_and_shared_by_worktrees(tmp_path: Path) -> None:
    main = tmp_path / "repo.main"
    git("init", "-q", str(main))
    git("-C", str(main), "commit", "-q", "--allow-empty", "-m", "start")
    worktree = tmp_path / "feature"
    git("-C", str(main), "worktree", "add", "-q", str(worktree))
    expected = Path.home() / ".claude" / "projects" / claude_code.project_key(str(main.resolve())) / "memory"
    assert claude_code.auto_memory_dir(main.resolve()).path == expected
    nested = worktree / "src" / "deep"
    nested.mkdir(parents=True)
    located = claude_code.auto_memory_dir(nested.resolve())
    assert located.path == expected, located
    assert "main worktree" in located.how
    plain = tmp_path / "no git here"
    plain.mkdir()
    assert claude_code.auto_memory_dir(plain).path.parent.name == claude_code.project_key(str(plain))


def write_settings(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"autoMemoryDirectory": value}), encoding="utf-8")


def test_autoMemoryDirectory_local_over_project_over_user_and_home_expanded(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert claude_code.auto_memory_dir(project).path.parts[-4:-2] == (config.name, "projects")
    write_settings(config / "settings.json", "~/memories/user")
    located = claude_code.auto_memory_dir(project)
    assert located.path == Path.home() / "memories" / "user" and "settings.json" in located.how
    write_settings(project / ".claude" / "settings.json", str(tmp_path / "project-mem"))
    assert claude_code.auto_memory_dir(project).path == tmp_path / "project-mem"
    write_settings(project / ".claude" / "settings.local.json", str(tmp_path / "local-mem") + "/")
    located = claude_code.auto_memory_dir(project)
    assert located.path == tmp_path / "local-mem" and "settings.local.json" in located.how
    # a value Claude Code cannot use means its default, not the next file's value
    write_settings(project / ".claude" / "settings.local.json", "relative/dir")
    assert claude_code.auto_memory_dir(project).path == config / "projects" / claude_code.project_key(
        str(project)) / "memory"
    write_settings(project / ".claude" / "settings.local.json", "~/../elsewhere")
    assert "default" in claude_code.auto_memory_dir(project).how


# --- front matter -----------------------------------------------------------------------------------------------


def test_front_matter_as_claude_code_reads_it() -> None:
    front, body = split("---\nname: a\ndescription: Use uv: never pip\nmetadata:\n  type: feedback\n---\nBody\n")
    assert front == {"name": "a", "description": "Use uv: never pip", "metadata": {"type": "feedback"}}
    assert body == "Body\n"
    assert split("no front matter\n---\n") == (None, "no front matter\n---\n")
    assert split("\ufeff---\r\ntype: user\r\n---\r\nx")[0] == {"type": "user"}
    with pytest.raises(FrontMatterError, match="never closed"):
        split("---\nname: a\n")
    with pytest.raises(FrontMatterError, match=r"not YAML: .*\(line 3\)"):
        split("---\nname: a\n  bad: indent\n---\n")
    with pytest.raises(FrontMatterError, match="not a table"):
        split("---\n- a\n- b\n---\n")


@pytest.mark.parametrize("value", ["[unclosed", "{unclosed: x", "[a, b"])
def test_front_matter_with_an_unclosed_list_is_an_error_not_a_title(value: str) -> None:
    """`description: [unclosed` was quoted by the fallback and imported as a memory titled "[unclosed"."""
    with pytest.raises(FrontMatterError, match=r"not YAML: .*\(line \d\)"):
        split(f"---\nname: a\ndescription: {value}\n---\nBody\n")
    assert split("---\ndescription: [a, b]\n---\n")[0] == {"description": ["a", "b"]}


# --- gate import --from claude-memory ---------------------------------------------------------------------------

EXPECTED = {  # file: (kind, scope) without --team
    "user_role.md": ("preference", "user"),
    "feedback_testing.md": ("directive", "private"),
    "feedback_terse.md": ("preference", "private"),
    "project_auth.md": ("decision", "private"),
    "project_freeze.md": ("finding", "private"),
    "reference_linear.md": ("reference", "private"),
    "debugging.md": ("finding", "private"),
    "team/changelog.md": ("directive", "private"),
}


def test_each_topic_file_becomes_a_memory_mapped_by_type(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    code, report, _ = imported(gate, "--from", "claude-memory")
    assert code == 0, report
    items = by_source(report)
    assert set(items) == set(TOPIC_FILES)  # MEMORY.md is the index, not a memory
    assert {name: (i["kind"], i["scope"]) for name, i in items.items()} == EXPECTED
    assert {i["status"] for i in items.values()} == {"imported"}
    assert str(directory) in report["from"] and "default" in report["from"]
    assert "7 links" in report["index"]

    store = store_of(project)
    memories = {m.id: m for m in store.memories()}
    assert set(memories) == {i["id"] for i in items.values()}
    testing = memories[items["feedback_testing.md"]["id"]]
    assert testing.title == "Integration tests must hit a real database, not mocks"
    assert "**Why:** last quarter" in testing.body
    assert testing.body.endswith(
        f"Imported from Claude Code's auto memory: feedback_testing.md, dated {testing.created[:10]}."
    )
    assert testing.tags == ["claude-memory"] and testing.source == "agent"
    freeze = memories[items["project_freeze.md"]["id"]]
    assert freeze.created == "2026-02-27T10:00:00Z"  # the file's own `modified` stamp
    assert memories[items["debugging.md"]["id"]].title == "Debugging notes"


def test_the_memory_date_is_the_files_when_it_has_no_stamp(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    os.utime(directory / "user_role.md", (1767225600, 1767225600))  # 2026-01-01T00:00:00Z
    _, report, _ = imported(gate, "--from", "claude-memory")
    assert by_source(report)["user_role.md"]["date"] == "2026-01-01"


def test_team_only_with_team_and_never_for_user_memories(gate, project: Path) -> None:
    write_sample(default_memory_dir(project))
    code, report, _ = imported(gate, "--from", "claude-memory", "--team")
    assert code == 0
    scopes = {name: item["scope"] for name, item in by_source(report).items()}
    assert scopes == {
        "user_role.md": "user",
        "feedback_testing.md": "private",
        "feedback_terse.md": "private",
        "project_auth.md": "team",
        "project_freeze.md": "team",
        "reference_linear.md": "team",
        "debugging.md": "private",
        "team/changelog.md": "team",  # Claude Code kept it as a team-wide convention
    }
    team_files = sorted(p.name for p in (project / ".gate" / "memories").glob("*.toml"))
    assert len(team_files) == 4


def test_a_second_run_imports_nothing_twice(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    assert imported(gate, "--from", "claude-memory")[0] == 0
    before = sorted(m.id for m in store_of(project).memories())
    code, report, _ = imported(gate, "--from", "claude-memory")
    assert code == 0 and report["imported"] == 0 and report["exists"] == len(TOPIC_FILES)
    # the same content under another name, or after gate forgot it, is there already too
    (directory / "copy_of_testing.md").write_bytes((directory / "feedback_testing.md").read_bytes())
    gate("forget", by_source(report)["user_role.md"]["id"])
    code, report, _ = imported(gate, "--from", "claude-memory")
    assert report["imported"] == 0 and by_source(report)["copy_of_testing.md"]["status"] == "exists"
    assert sorted(m.id for m in store_of(project).memories()) == before


def test_a_changed_topic_file_supersedes_what_it_imported_before(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    _, first, _ = imported(gate, "--from", "claude-memory")
    old_id = by_source(first)["project_freeze.md"]["id"]
    path = directory / "project_freeze.md"
    path.write_text(path.read_text().replace("2026-03-05", "2026-03-12"), encoding="utf-8")
    code, second, _ = imported(gate, "--from", "claude-memory")
    item = by_source(second)["project_freeze.md"]
    assert code == 0 and item["status"] == "imported" and item["supersedes"] == [old_id]
    code, shown, _ = gate("show", old_id, "--json")  # supersession is derived from the links (issue 15)
    assert code == 0 and json.loads(shown)["status"] == "superseded"
    assert "2026-03-12" in store_of(project).get(item["id"]).title


def test_dry_run_prints_the_mapping_and_writes_nothing(gate, project: Path) -> None:
    write_sample(default_memory_dir(project))
    code, out, _ = gate("import", "--from", "claude-memory", "--dry-run")
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("feedback_terse.md"))
    assert "feedback → preference, private" in line and "would import as cm-" in line
    assert 'it says "This user wants"' in line  # the rule that chose the kind
    assert "would import 8, already imported 0, refused 0 (dry run: nothing was written)" in out
    assert store_of(project).memories() == []
    assert not (Path(ProjectPaths.for_cwd(project).private_store)).exists()


def test_bad_files_are_refused_one_by_one_and_the_rest_imported(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    write_bad_files(directory)
    code, report, err = imported(gate, "--from", "claude-memory")
    assert code == 1 and "5 cannot be imported" in err
    items = by_source(report)
    for name, (_, reason) in BAD_FILES.items():
        assert items[name]["status"] == "refused", items[name]
        assert reason in items[name]["error"], items[name]
        assert "id" not in items[name]
    assert "ghp_" not in json.dumps(report)  # a refusal never quotes the secret
    assert report["imported"] == len(TOPIC_FILES)
    stored = store_of(project).memories()
    assert len(stored) == len(TOPIC_FILES)
    assert not any("ghp_" in m.body for m in stored)
    leftovers = [p for p in Path(ProjectPaths.for_cwd(project).private_store).iterdir() if p.suffix != ".toml"]
    assert leftovers == []  # no temp files: nothing half-written


def test_text_report_has_one_line_per_file(gate, project: Path) -> None:
    directory = write_sample(default_memory_dir(project))
    write_bad_files(directory)
    code, out, _ = gate("import", "--from", "claude-memory")
    assert code == 1
    lines = out.splitlines()
    assert "latin1.md" in next(x for x in lines if "not UTF-8" in x)
    assert "opinion.md" in next(x for x in lines if "unknown type 'opinion'" in x)
    assert sum(1 for x in lines if "imported as cm-" in x) == len(TOPIC_FILES)
    assert "imported 8, already imported 0, refused 5" in out


def test_an_explicit_directory_and_a_missing_one(gate, project: Path, tmp_path: Path) -> None:
    elsewhere = write_sample(tmp_path / "copied-memory")
    code, report, _ = imported(gate, "--from", "claude-memory", str(elsewhere))
    assert code == 0 and report["imported"] == len(TOPIC_FILES) and "given" in report["from"]
    code, out, err = gate("import", "--from", "claude-memory")
    assert code == 3 and "no auto-memory directory at" in err and "hint:" in err


def test_plain_import_still_needs_a_file(gate, project: Path) -> None:
    code, _, err = gate("import")
    assert code == 2 and "needs FILE" in err
    (project / "in.jsonl").write_text("")
    code, _, err = gate("import", str(project / "in.jsonl"), "--dry-run")
    assert code == 2 and "--dry-run goes with --from" in err


def test_doctor_names_the_import_command(gate, project: Path) -> None:
    write_sample(default_memory_dir(project))
    code, out, _ = gate("doctor", "--no-run", "--json")
    (auto,) = [c for c in json.loads(out)["checks"] if "auto memory" in c["message"]]
    assert "holds 8 memories" in auto["message"]
    assert "gate import --from claude-memory" in auto["hint"]


# --- gate import --from claude-md -------------------------------------------------------------------------------

CLAUDE_MD = """# Payments service

Build with `make`; see docs/.

## Conventions

- Use `uv` for every install, never pip.
- Commit messages follow Conventional Commits
  (feat:, fix:, chore:).
- Migrations:
  - always with --lock-timeout 5s
  - never on Fridays

```sh
- not an item: this is code
## not a heading either
```

### Testing

1. Run `pytest -q` before pushing.
2. Integration tests need Docker running.

## Architecture

- src/api is the backend.
"""


def test_claude_md_section_bullets_become_directives(gate, project: Path) -> None:
    path = project / "CLAUDE.md"
    path.write_text(CLAUDE_MD, encoding="utf-8")
    before = path.read_bytes()
    code, report, _ = imported(gate, "--from", "claude-md", "--section", "conventions")
    assert code == 0, report
    titles = [item["title"] for item in report["items"]]
    assert titles == [
        "Use `uv` for every install, never pip.",
        "Commit messages follow Conventional Commits (feat:, fix:, chore:).",
        "Migrations: always with --lock-timeout 5s; never on Fridays",
        "Run `pytest -q` before pushing.",
        "Integration tests need Docker running.",
    ]
    assert {(i["kind"], i["scope"], i["status"]) for i in report["items"]} == {("directive", "private", "imported")}
    assert path.read_bytes() == before  # the file is only read
    memory = store_of(project).get(report["items"][2]["id"])
    assert memory.source == "human" and memory.tags == ["claude-md"]
    assert "- always with --lock-timeout 5s" in memory.body
    assert 'Imported from CLAUDE.md, section "Conventions"' in memory.body
    code, report, _ = imported(gate, "--from", "claude-md", "--section", "Conventions")
    assert report["imported"] == 0 and report["exists"] == 5


def test_claude_md_without_a_section_lists_them(gate, project: Path) -> None:
    (project / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    code, _, err = gate("import", "--from", "claude-md")
    assert code == 2 and "--section HEADING" in err
    assert "## Conventions (5 bullets)" in err and "## Architecture (1 bullet)" in err
    code, _, err = gate("import", "--from", "claude-md", "--section", "Deployment")
    assert code == 2 and "no section 'Deployment'" in err
    assert store_of(project).memories() == []


def test_claude_md_bad_input(gate, project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "notes.md"
    secret.write_text("## Deploy\n\n- Deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789AB as token\n"
                      "- Deploys go out on Tuesdays only\n", encoding="utf-8")
    code, report, _ = imported(gate, "--from", "claude-md", str(secret), "--section", "Deploy", "--team")
    assert code == 1
    first, second = report["items"]
    assert first["status"] == "refused" and "secret" in first["error"] and "ghp_" not in json.dumps(report)
    assert second["status"] == "imported" and second["scope"] == "team"
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"## A\n\n- caf\xe9\n")
    code, _, err = gate("import", "--from", "claude-md", str(latin), "--section", "A")
    assert code == 2 and "not UTF-8" in err
    code, _, err = gate("import", "--from", "claude-md", "--section", "A")
    assert code == 3 and "no CLAUDE.md" in err


def test_the_users_own_claude_md_goes_to_user_scope(gate, project: Path) -> None:
    own = Path.home() / ".claude" / "CLAUDE.md"
    own.parent.mkdir(parents=True)
    own.write_text("## Style\n\n- Answer in British English.\n", encoding="utf-8")
    code, report, _ = imported(gate, "--from", "claude-md", str(own), "--section", "style")
    assert code == 0 and report["items"][0]["scope"] == "user"


def test_an_interrupted_import_of_claude_memory_says_what_it_wrote_and_a_run_again_finishes_it(project: Path) -> None:
    """Ctrl-C (a real SIGINT, at the second memory written: gate/memory/store/killpoints.py) stopped it without a
    word."""
    import sys

    write_sample(default_memory_dir(project))
    gate_bin = str(Path(sys.executable).parent / "gate")
    command = [gate_bin, "import", "--from", "claude-memory", "--project", str(project)]
    environment = {**os.environ, "GATE_KILL_AT": "store.written@2", "GATE_KILL_SIGNAL": "INT"}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=project, timeout=120)
    assert done.returncode == 130
    assert f"interrupted: 2 of {len(TOPIC_FILES)} memories were written" in done.stderr
    assert "run the same import again" in done.stderr and "Traceback" not in done.stderr
    assert len(store_of(project).memories()) == 2
    environment.pop("GATE_KILL_AT")
    again = subprocess.run([*command, "--json"], capture_output=True, text=True, env=environment, cwd=project,
                           timeout=120)
    report = json.loads(again.stdout)
    assert again.returncode == 0 and report["imported"] == len(TOPIC_FILES) - 2 and report["exists"] == 2
    assert len(store_of(project).memories()) == len(TOPIC_FILES)
