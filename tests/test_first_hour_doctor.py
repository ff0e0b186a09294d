"""The first hour of a new user (issue 23), `gate doctor` and the set-up and error messages: each defect a
newcomer met, as a test that failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gate.paths import error_log_file

Gate = Callable[..., tuple[int, str, str]]


def doctor(gate: Gate, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = gate("doctor", "--json", *args)
    assert out, err
    return code, json.loads(out)


def of(report: dict[str, Any], check: str, status: str | None = None) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["check"] == check and (status is None or c["status"] == status)]


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
