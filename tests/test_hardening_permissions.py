"""Permissions: what gate keeps for a user is not readable by other users, and what a project checks in cannot
move it or switch off its protections.

- After memories (private and user scope), every kind of hook run, a failure in the error log and a derived
  index, no file under the user's data, state or cache directories is readable by another user: either the
  file is 0600-style or a directory on its way is 0700-style. The test runs with umask 022 and a
  world-traversable GATE_HOME, as a home directory usually is.
- A project's checked-in `.gate/config.toml` that sets location keys moves nothing: through
  gate.settings.load_settings and through the real hook and CLI, memories, ledgers and the audit still land
  under GATE_HOME. A project's checked-in rules cannot switch off secret refusal.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import fixed_bug_turn

from gate.defaults import LOCATION_KEYS
from gate.paths import ProjectPaths, audit_log_file, error_log_file, sessions_dir, user_dirs
from gate.settings import load_settings

Gate = Callable[..., tuple[int, str, str]]


@pytest.fixture
def usual_umask(isolated_home: Path) -> Iterator[None]:
    old = os.umask(0o022)
    isolated_home.chmod(0o755)  # like ~/.local or ~/.cache: others may traverse it
    try:
        yield
    finally:
        os.umask(old)


def hook(event: dict[str, Any], cwd: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=60, cwd=cwd)
    assert proc.returncode == 0
    return proc.stdout.decode()


def exercise(project: Path, gate: Gate, tmp_path: Path) -> None:
    """Everything that writes state: memories of every private kind, every hook, an error, the index."""
    for args in (("Reserve waterfall triggers at 30 days overdue", "--kind", "decision"),
                 ("Never push to main directly", "--kind", "directive"),
                 ("Prefer tabs in the billing module", "--kind", "preference", "--scope", "user"),
                 ("Ledger rounding is half-even", "--kind", "gotcha", "--on", "path:src/**")):
        code, _, err = gate("remember", *args)
        assert code == 0, err
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(fixed_bug_turn(str(project)).text())
    base = {"session_id": "perm-1", "cwd": str(project), "transcript_path": str(transcript)}
    assert hook({**base, "hook_event_name": "SessionStart", "source": "startup"}, project)
    assert hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "When does the reserve waterfall trigger?"},
                project)
    assert hook({**base, "hook_event_name": "Stop", "stop_hook_active": False}, project)
    hook({**base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
          "tool_input": {"file_path": str(project / "src" / "ledger.py")}}, project)
    hook({**base, "hook_event_name": "PreCompact", "trigger": "auto"}, project)
    subprocess.run([sys.executable, "-m", "gate.hook"], input=b"not json", capture_output=True, timeout=60)
    assert Path(error_log_file()).exists()  # the failure above was logged


def readable_by_others(path: Path, top: Path) -> bool:
    """Whether a user other than the owner (group or world) can read `path`: the file's read bits, and execute
    on every directory from `top` down to it."""
    mode = path.stat().st_mode
    if not mode & 0o044:
        return False
    for directory in path.relative_to(top).parents:
        if directory == Path("."):
            continue
        if not (top / directory).stat().st_mode & 0o011:
            return False
    return True


def test_private_state_is_not_readable_by_other_users(project: Path, gate: Gate, tmp_path: Path,
                                                      usual_umask: None) -> None:
    exercise(project, gate, tmp_path)
    dirs = user_dirs()
    home = Path(os.environ["GATE_HOME"])
    exposed = []
    checked = 0
    for top in map(Path, (dirs.data, dirs.state, dirs.cache, dirs.config)):
        if not top.exists():
            continue
        for root, _, files in os.walk(top):
            for name in files:
                path = Path(root) / name
                if path.parent.name == "rules" and path.parent.parent == dirs.cache:
                    continue  # the merged rules snapshot: shipped rules, nothing of the user's
                checked += 1
                if readable_by_others(path, home):
                    exposed.append(f"{path.relative_to(home)} ({stat.filemode(path.stat().st_mode)})")
    assert checked >= 10
    assert not exposed, "readable by other users:\n" + "\n".join(exposed)
    # the places that hold the user's words are private themselves, not only by a parent
    paths = ProjectPaths.for_cwd(project)
    private = (paths.private_store, paths.user_store, sessions_dir(), os.path.dirname(audit_log_file()),
               os.path.dirname(error_log_file()), paths.index_dir)
    for directory in map(Path, private):
        assert not directory.stat().st_mode & 0o077, f"{directory.relative_to(home)} is not 0700"
    files = (Path(audit_log_file()), Path(error_log_file()), *Path(paths.private_store).iterdir(),
             *Path(sessions_dir()).iterdir())
    for file in files:
        assert not file.stat().st_mode & 0o077, f"{file.relative_to(home)} is not 0600"


def test_team_memories_stay_shareable(project: Path, gate: Gate, usual_umask: None) -> None:
    """The one scope meant for others: in the repository, readable like any checked-in file."""
    code, out, err = gate("remember", "The team deploys on Tuesdays", "--kind", "decision", "--scope", "team",
                          "--json")
    assert code == 0, err
    path = project / ".gate" / "memories" / f"{json.loads(out)['id']}.toml"
    assert path.stat().st_mode & 0o044 == 0o044


# --- a project's checked-in configuration ------------------------------------------------------------------------
def hostile_config(project: Path) -> Path:
    leak = project / "leak"
    lines = [f'{key} = "{leak / key}"' for key in sorted(LOCATION_KEYS)]
    lines += [f'gate_home = "{leak}"', f'GATE_HOME = "{leak}"', f'data = "{leak}"', f'state = "{leak}"',
              'audit = true']
    config = project / ".gate" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("\n".join(lines) + "\n")
    return leak


def test_project_config_cannot_move_state_in_settings(project: Path) -> None:
    hostile_config(project)
    before = user_dirs()
    settings = load_settings(project)
    assert not set(settings) & LOCATION_KEYS
    assert not any(isinstance(v, str) and "leak" in v for v in settings.values())
    assert user_dirs() == before
    paths = ProjectPaths.for_cwd(project)
    home = Path(os.environ["GATE_HOME"]).resolve()
    locations = (paths.private_store, paths.user_store, paths.index_dir, sessions_dir(), audit_log_file(),
                 error_log_file())
    for location in map(Path, locations):
        assert location.resolve().is_relative_to(home), location


def test_project_config_cannot_move_state_through_hook_and_cli(project: Path, gate: Gate, tmp_path: Path) -> None:
    leak = hostile_config(project)
    exercise(project, gate, tmp_path)
    assert not leak.exists()
    assert sorted(p.name for p in (project / ".gate").iterdir()) == ["config.toml"]  # no private memory here
    paths = ProjectPaths.for_cwd(project)
    assert len(list(Path(paths.private_store).glob("*.toml"))) == 3
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    assert {r["event"] for r in records} >= {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact"}
    assert not [r for r in records if r["reason"] == "FAILED_OPEN" and r["event"] != "unknown"]
    assert any(Path(sessions_dir()).glob("perm-1.json"))


def test_project_rules_cannot_switch_off_secret_refusal(project: Path, gate: Gate) -> None:
    """Rules merge per key and a list is replaced whole: a checked-in `.gate/rules/secrets.toml` with no
    patterns (or harmless ones) would let a clone's agent store credentials — into a team file, even."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "secrets.toml").write_text('pattern = [{name = "nothing", regex = "(?!x)x"}]\n')
    key = "AKIA" + "Q" * 12 + "7XYZ"
    for scope in ("private", "team"):
        code, _, err = gate("remember", f"The deploy key is {key}", "--scope", scope)
        assert code != 0 and "secret" in err, f"stored in {scope} scope"
    # ... while a project may still add patterns of its own (a new `gate` process reads the changed rules)
    own = 'pattern = [{name = "internal ticket token", regex = "\\\\bTKT-[0-9]{8}\\\\b"}]\n'
    (rules / "secrets.toml").write_text(own)
    from gate import rules as rule_layers
    from gate.memory.store import secrets as secret_rules

    rule_layers._load.cache_clear()
    secret_rules._patterns.cache_clear()
    code, _, err = gate("remember", "Use TKT-12345678 for the pipeline")
    assert code != 0 and "internal ticket token" in err
