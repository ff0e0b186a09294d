"""The first hour of a new user (issue 23), `gate doctor` and the set-up and error messages: each defect a
newcomer met, as a test that failed before its fix."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import doctor_checks, doctor_report

from gate.paths import error_log_file

Gate = Callable[..., tuple[int, str, str]]


doctor = doctor_report
of = doctor_checks


def log_lines(*records: dict[str, Any]) -> None:
    log = Path(error_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


# --- 1. a bad setting is not a fail-open; the error count is this project's -------------------------------------


@pytest.mark.parametrize("how", ["file", "env"])
def test_a_bad_setting_is_named_with_its_fix_and_the_hooks_are_not_failing(
    how: str, gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert gate("install", "--project", str(project))[0] == 0
    if how == "file":
        (project / ".gate").mkdir()
        (project / ".gate" / "config.toml").write_text("writeback_cap = -1\n")
        name = "writeback_cap"
    else:
        monkeypatch.setenv("GATE_WRITEBACK", "maybe")
        name = "GATE_WRITEBACK"
    _, report = doctor(gate)
    assert not of(report, "hooks", "fail"), of(report, "hooks", "fail")
    runs = of(report, "hooks", "ok")
    assert runs and all("bad setting" in c["message"] and "default" in c["message"] for c in runs)
    (config,) = of(report, "config", "fail")
    assert name in config["message"] and "default" in config["message"]
    assert ("delete the line" if how == "file" else "unset it") in config["message"]
    # The hooks' lines about the setting, and doctor's own runs, are not counted as failures afterwards.
    _, again = doctor(gate, "--no-run")
    assert not of(again, "errors"), of(again, "errors")


def test_failures_are_counted_for_this_project_only_and_can_be_acknowledged(
    gate: Gate, project: Path, tmp_path: Path
) -> None:
    assert gate("install", "--project", str(project))[0] == 0
    other = tmp_path / "other-project"
    other.mkdir()
    log_lines(
        {"ts": "2999-01-01T00:00:00Z", "event": "Stop", "error": "KeyError", "project": str(other)},
        {"ts": "2999-01-01T00:00:00Z", "event": "Stop", "error": "KeyError", "project": str(project),
         "synthetic": True},
    )
    _, report = doctor(gate, "--no-run")
    assert not of(report, "errors"), of(report, "errors")
    log_lines({"ts": "2000-01-01T00:00:00Z", "event": "Stop", "error": "OSError", "project": str(project)})
    from gate.install.diagnose import errors

    assert errors.recent_failures(project, hours=24 * 365 * 100)  # ours, and old enough to be acknowledged
    (warn,) = errors.recent_failures(project, hours=24 * 365 * 100)
    assert "1 hook failure of this project" in warn.message and "--clear-errors" in (warn.hint or "")
    code, out, _ = gate("doctor", "--no-run", "--clear-errors")
    assert "acknowledged" in out
    assert not errors.recent_failures(project, hours=24 * 365 * 100)


def test_the_hook_records_its_project_in_the_error_log(project: Path) -> None:
    from tests.conftest import run_hook

    (project / ".gate").mkdir()
    (project / ".gate" / "config.toml").write_text("writeback_cap = -1\n")
    run_hook({"hook_event_name": "SessionStart", "session_id": "s-1", "cwd": str(project), "source": "startup"})
    (line,) = Path(error_log_file()).read_text().splitlines()
    record = json.loads(line)
    assert record["kind"] == "setting" and Path(record["project"]).resolve() == project.resolve()


def test_config_check_reports_every_problem(gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".gate").mkdir()
    (project / ".gate" / "config.toml").write_text('writeback_cap = -1\nrecall = "sometimes"\nnot_a_setting = 1\n')
    monkeypatch.setenv("GATE_WRITEBACK", "maybe")
    code, out, _ = gate("config", "check")
    assert code == 1
    for name in ("writeback_cap", "recall", "not_a_setting", "GATE_WRITEBACK"):
        assert name in out, out
    assert out.count("error: ") == 4


# --- 2. a muted project is said ---------------------------------------------------------------------------------


@pytest.mark.parametrize("duration", [None, "2h"])
def test_doctor_says_the_project_is_muted(duration: str | None, gate: Gate, project: Path) -> None:
    assert gate("install", "--project", str(project))[0] == 0
    assert gate("mute", *(["--for", duration] if duration else []))[0] == 0
    code, out, _ = gate("doctor", "--no-run")
    assert code == 0
    assert "muted" in out and "gate unmute" in out
    assert ("until 2" in out) if duration else ("until `gate unmute`" in out)
    gate("unmute")
    _, out = gate("doctor", "--no-run")[:2]
    assert "muted" not in out


# --- 3. the set-up messages say what the README says -----------------------------------------------------------


def test_a_teammate_is_pointed_to_the_readme_and_its_one_command() -> None:
    """The line a teammate without gate is shown says what is missing and where to read more, in a few words: the
    README, whose one command sets gate up and wires the project."""
    from gate.install import wiring

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "./install.sh ~/code/my-project" in readme  # the README's one command: set up and wire
    assert wiring.NOT_INSTALLED.startswith("memory-gate not installed") and "README" in wiring.NOT_INSTALLED
    assert len(wiring.NOT_INSTALLED.split()) <= 12
    assert not set("'\"\\") & set(wiring.NOT_INSTALLED)  # it sits in a JSON string inside '...'
    assert json.dumps(wiring.NOT_INSTALLED) in wiring.PORTABLE_SESSION_START


def test_a_command_committed_by_an_earlier_gate_is_still_portable(gate: Gate, project: Path) -> None:
    """The committed commands changed: the ones an earlier gate committed are not another machine's interpreter
    to doctor, and `gate install` replaces them."""
    from gate.install import wiring

    assert len(wiring.EARLIER_PORTABLE) == 3  # two on stderr for every event, then SessionStart's long line
    for earlier in sorted(wiring.EARLIER_PORTABLE):
        assert wiring.is_portable(earlier)
        assert gate("install", "--project", str(project))[0] == 0
        settings = project / ".claude" / "settings.json"
        text = settings.read_text()
        for current in (wiring.PORTABLE_COMMAND, wiring.PORTABLE_SESSION_START):
            text = text.replace(json.dumps(current)[1:-1], json.dumps(earlier)[1:-1])
        settings.write_text(text)
        assert json.dumps(wiring.PORTABLE_COMMAND)[1:-1] not in settings.read_text()
        code, report = doctor(gate, "--no-run")
        assert code == 0, [c for c in report["checks"] if c["status"] != "ok"]
        assert gate("install", "--project", str(project))[0] == 0
        assert json.dumps(wiring.PORTABLE_COMMAND)[1:-1] in settings.read_text()
        assert json.dumps(earlier)[1:-1] not in settings.read_text()


def test_install_sh_names_the_launcher_once_and_a_doctor_that_runs(tmp_path: Path, project: Path) -> None:
    from tests.test_install import _install_sh

    home = tmp_path / "newcomer"
    home.mkdir()
    proc = _install_sh(str(project), cwd=tmp_path, home=home)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout + proc.stderr
    launcher = str(home / ".local/share/memory-gate/hook")
    assert sum(launcher in line for line in out.splitlines()) == 1, out
    (check,) = [line for line in out.splitlines() if "check it with" in line]
    assert "/.venv/bin/gate doctor" in check, check  # gate is not on this PATH: the path that works


def test_install_sh_with_a_missing_directory_says_what_to_give(tmp_path: Path) -> None:
    from tests.test_install import REPO

    proc = subprocess.run(["bash", str(REPO / "install.sh"), str(tmp_path / "nonexistent")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "no such project directory" in proc.stderr and "hint: " in proc.stderr
    assert "./install.sh ~/code/my-project" in proc.stderr


def test_the_path_hint_makes_the_directory_and_says_about_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from gate.install.diagnose.path import path_info

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (check,) = path_info()
    assert check.status == "info" and check.hint
    assert "mkdir -p ~/.local/bin &&" in check.hint and "export PATH=" in check.hint


# --- 4. errors with hints ----------------------------------------------------------------------------------------


def test_import_of_a_missing_file_says_so_plainly(gate: Gate, tmp_path: Path) -> None:
    code, out, err = gate("import", str(tmp_path / "nonexistent.jsonl"))
    assert code != 0
    assert "no such file" in err and "Errno" not in err and "hint:" in err and "gate export" in err


def test_import_of_a_line_that_is_not_json_names_the_line(gate: Gate, tmp_path: Path) -> None:
    source = tmp_path / "notes.jsonl"
    source.write_text('{"kind": "finding", "title": "Cache keys include the tenant id"}\nnot json at all\n')
    code, out, err = gate("import", str(source))
    assert code != 0
    assert "line 2: not JSON" in err and "char 0" not in err and "JSON object" in err


def test_remember_with_an_id_that_exists_says_what_to_do(gate: Gate) -> None:
    code, out, _ = gate("remember", "Deploys go out on Tuesdays only", "--kind", "decision")
    assert code == 0
    existing = out.strip().split()[-1]
    assert existing.startswith("m-"), out
    code, _, err = gate("remember", "The cache layer keys on the tenant id", "--kind", "finding", "--id", existing)
    assert code != 0 and "exists already" in err
    assert "hint:" in err and f"--supersedes {existing}" in err and f"gate edit {existing}" in err


def test_an_unknown_trigger_clause_is_named(gate: Gate) -> None:
    code, _, err = gate("remember", "The cache layer keys on the tenant id", "--kind", "finding", "--on", "foo:bar")
    assert code != 0
    assert "'foo:…'" in err and "'foo' is not a clause name" in err and "?:" not in err
    assert "bar" not in err.split("hint:")[0]  # a value is never repeated (it may be a secret)
    secret = "sk-live-abcdef0123456789abcdef"
    code, _, err = gate("remember", "The cache layer keys on the tenant id", "--kind", "finding", "--on", secret)
    assert code != 0 and secret not in err


# --- 5. gate edit without a terminal ------------------------------------------------------------------------------


def _remembered(gate: Gate, text: str = "Redis eviction policy is volatile-lru") -> str:
    code, out, err = gate("remember", text, "--kind", "finding")
    assert code == 0, err
    return out.strip().split()[-1]


def test_edit_without_a_terminal_or_editor_refuses_before_launching_anything(
    gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gate.commands.edit as edit

    memory_id = _remembered(gate)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    launched: list[list[str]] = []
    monkeypatch.setattr(edit.subprocess, "call", lambda argv, *a, **k: launched.append(argv) or 0)
    code, out, err = gate("edit", memory_id)  # the fixture's stdin is no terminal, as the agent's Bash tool
    assert code != 0 and launched == []
    assert "no terminal" in err and "--cues" in err and "--add-cues" in err and "EDITOR" in err


def test_an_invalid_edit_is_kept_and_named(gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    drafts = tmp_path / "tmp"
    drafts.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(drafts))
    memory_id = _remembered(gate)
    script = tmp_path / "editor.sh"
    script.write_text('#!/bin/sh\nprintf "title = \\"unterminated\\nkind = [\\n" > "$1"\n')
    script.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(script))
    code, _, err = gate("edit", memory_id)
    assert code != 0 and "not a valid memory" in err
    (kept,) = [word.rstrip(":,)") for word in err.split() if word.rstrip(":,)").endswith(f"{memory_id}.toml")]
    assert "unterminated" in Path(kept).read_text()
    # and a valid edit leaves no draft behind
    script.write_text('#!/bin/sh\nsed -i "s/volatile-lru/allkeys-lru/" "$1"\n')
    code, out, err = gate("edit", memory_id)
    assert code == 0 and "updated" in out, err
    assert list(drafts.iterdir()) == [Path(kept)]  # only the kept one: the applied draft is gone


# --- 6. --help that explains ------------------------------------------------------------------------------------


def _help(gate: Gate, command: str) -> str:
    code, out, _ = gate(command, "--help")
    assert code == 0
    return " ".join(out.split())  # argparse wraps at the terminal's width


def _subparser(command: str) -> Any:
    import argparse

    from gate.cli import build_parser

    parser = build_parser([command])
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices[command]


@pytest.mark.parametrize("command", ["forget", "show", "link", "export", "search", "mute", "stats", "list"])
def test_every_command_has_a_description(command: str) -> None:
    parser = _subparser(command)
    assert parser.description and len(parser.description) > 60, command
    undocumented = [a.dest for a in parser._actions if not a.help]
    assert undocumented == [], (command, undocumented)


def test_help_names_link_types_defaults_and_what_forget_keeps(gate: Gate) -> None:
    from gate.memory.vocab import LINK_TYPES

    link = _help(gate, "link")
    assert all(f"{kind} (" in link for kind in LINK_TYPES), link
    assert "(default: active)" in _help(gate, "list")
    assert "default: all of the audit log" in _help(gate, "stats")
    assert "until `gate unmute`" in _help(gate, "mute").split("--for DURATION")[1]
    forget = _help(gate, "forget")
    assert "stays on disk" in forget and "gate restore" in forget
    remember = _subparser("remember")
    for dest in ("tags", "supersedes"):
        (action,) = [a for a in remember._actions if a.dest == dest]
        assert action.help, dest
    (query,) = [a for a in _subparser("search")._actions if a.dest == "query"]
    assert query.help


# --- 7. plurals ------------------------------------------------------------------------------------------------


def test_one_memory_is_one_memory_in_stats(gate: Gate, project: Path) -> None:
    from tests.conftest import run_hook

    _remembered(gate)
    code, out, err = gate("stats")
    assert code == 0, err
    assert "1 active memory" in out and "1 active memories" not in out, out
    run_hook({"hook_event_name": "UserPromptSubmit", "session_id": "s-1", "cwd": str(project),
              "prompt": "what is the redis eviction policy?", "permission_mode": "default"})
    code, out, err = gate("stats")
    assert code == 0, err
    assert "1 session," in out and "1 prompt →" in out and "1 active memory —" in out, out
    assert "1 sessions" not in out and "1 prompts" not in out, out
