"""`gate doctor`: finds what is broken (exit 1), runs each hook for real, informs about competitors, changes nothing."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import doctor_checks, doctor_report

from gate.install import wiring
from gate.paths import ProjectPaths, audit_log_file, error_log_file, sessions_dir

Gate = Callable[..., tuple[int, str, str]]


@pytest.fixture(autouse=True)
def _clean_claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "GATE_PYTHON"):
        monkeypatch.delenv(name, raising=False)


doctor = doctor_report
of = doctor_checks


def settings_path(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def gate_settings(command: str, events: tuple[str, ...] = wiring.EVENT_NAMES) -> dict[str, Any]:
    return {
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": f"{command} {wiring.MARKER}", "timeout": 10}]}]
            for event in events
        }
    }


def test_not_wired_is_broken(gate: Gate, project: Path) -> None:
    code, report = doctor(gate)
    assert code == 1 and report["ok"] is False
    (wiring_check,) = of(report, "wiring", "fail")
    assert "not wired" in wiring_check["message"] and "gate install" in wiring_check["hint"]


def test_healthy_install_runs_every_hook(gate: Gate, project: Path) -> None:
    assert gate("install", "--project", str(project))[0] == 0
    before = settings_path(project).read_bytes()
    sessions_before = set(Path(sessions_dir()).iterdir()) if Path(sessions_dir()).exists() else set()
    code, report = doctor(gate)
    assert code == 0, [c for c in report["checks"] if c["status"] == "fail"]
    assert report["ok"] is True
    runs = of(report, "hooks")
    assert sorted(c["details"]["event"] for c in runs) == sorted(wiring.EVENT_NAMES)
    for run in runs:
        assert run["status"] == "ok", run
        assert run["details"]["latency_ms"] > 0 and run["details"]["exit_code"] == 0
        assert run["details"]["source"] == str(settings_path(project))
    assert of(report, "wiring", "ok") and of(report, "store", "ok") and of(report, "config", "ok")
    assert of(report, "rules", "ok")
    # It informs and changes nothing: settings untouched, the synthetic session leaves no ledger behind,
    # and its audit records are tagged so that stats leave them out.
    assert settings_path(project).read_bytes() == before
    assert set(Path(sessions_dir()).iterdir()) == sessions_before
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    doctor_records = [r for r in records if str(r.get("session", "")).startswith("gate-doctor-")]
    assert doctor_records and all(r.get("synthetic") is True for r in doctor_records)


def test_text_output_and_no_run(gate: Gate, project: Path) -> None:
    gate("install", "--project", str(project))
    code, out, _ = gate("doctor", "--no-run")
    assert code == 0
    assert "gate doctor: project" in out and "hooks:" not in out
    assert "wiring: every event is wired" in out


def test_missing_interpreter_is_broken(gate: Gate, project: Path, tmp_path: Path) -> None:
    python = tmp_path / "gone" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    gate("install", "--project", str(project), "--python", str(python))
    python.unlink()
    code, report = doctor(gate)
    assert code == 1
    assert any("does not exist" in c["message"] for c in of(report, "wiring", "fail"))
    runs = of(report, "hooks", "fail")  # and running it does nothing, at every event (SessionStart's notice too)
    assert {c["details"]["event"] for c in runs} == set(wiring.EVENT_NAMES), runs


def test_partial_wiring_is_broken(gate: Gate, project: Path) -> None:
    command = shlex.quote(sys.executable) + " -P -m gate.hook"
    write_json(settings_path(project), gate_settings(command, ("UserPromptSubmit", "Stop")))
    code, report = doctor(gate, "--no-run")
    assert code == 1
    (missing,) = of(report, "wiring", "fail")
    assert "SessionStart" in missing["message"] and "PreCompact" in missing["message"]
    assert "UserPromptSubmit" not in missing["message"]


def test_invalid_settings_file_is_broken(gate: Gate, project: Path) -> None:
    gate("install", "--project", str(project))
    local = settings_path(project, "settings.local.json")
    local.write_text('{"permissions": {')
    code, report = doctor(gate, "--no-run")
    assert code == 1
    (bad,) = of(report, "settings", "fail")
    assert str(local) in bad["message"] and "ignores the whole file" in bad["message"]
    assert local.read_text() == '{"permissions": {'


def test_hook_with_bad_output_is_broken(gate: Gate, project: Path) -> None:
    write_json(settings_path(project), gate_settings("echo not-json"))
    code, report = doctor(gate)
    assert code == 1
    failures = of(report, "hooks", "fail")
    assert len(failures) == len(wiring.EVENT_NAMES)
    assert all("not one JSON object" in c["message"] for c in failures)


def test_hook_that_fails_open_is_broken(gate: Gate, project: Path) -> None:
    log = Path(error_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    # Exits 0 with no output, like gate's own fail-open path, and leaves a line in the error log.
    script = f'echo \'{{"ts":"x","error":"Boom"}}\' >> {shlex.quote(str(log))}'
    write_json(settings_path(project), gate_settings(script, ("UserPromptSubmit",)))
    code, report = doctor(gate)
    assert code == 1
    assert any("failed open" in c["message"] for c in of(report, "hooks", "fail"))


def test_double_wiring_warns(gate: Gate, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "venv2" / "bin" / "python"
    other.parent.mkdir(parents=True)
    other.symlink_to(sys.executable)
    gate("install", "--project", str(project))
    gate("install", "--project", str(project), "--scope", "local", "--python", str(other))
    code, report = doctor(gate, "--no-run")
    assert code == 0
    warnings = [c["message"] for c in of(report, "wiring", "warn")]
    assert any("UserPromptSubmit runs gate 2 times" in m for m in warnings)


def test_competitors_and_auto_memory_are_reported_not_changed(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate("install", "--project", str(project))
    user = write_json(
        Path.home() / ".claude" / "settings.json",
        {
            "enabledPlugins": {"claude-mem@thedotmack": True, "formatter@tools": True},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "npx mem0-hook inject"}]}]},
        },
    )
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memory": {"command": "npx"}}}))
    before = user.read_bytes()
    code, report = doctor(gate, "--no-run")
    assert code == 0  # informs; nothing here is broken
    messages = [c["message"] for c in of(report, "competition")]
    assert any("mem0-hook" in m for m in messages)
    assert any("claude-mem@thedotmack" in m for m in messages)
    assert not any("formatter" in m for m in messages)
    assert any("MCP memory server" in m for m in messages)
    (auto,) = [c for c in of(report, "competition") if "auto memory" in c["message"]]
    # Claude Code's default, breaking nothing of gate's: information with a hint, not a warning.
    assert auto["status"] == "info" and "autoMemoryEnabled" in auto["hint"]
    assert user.read_bytes() == before

    write_json(settings_path(project, "settings.local.json"), {"autoMemoryEnabled": False})
    _, report = doctor(gate, "--no-run")
    assert [c["status"] for c in of(report, "competition") if "auto memory" in c["message"]] == ["ok"]
    settings_path(project, "settings.local.json").unlink()
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    _, report = doctor(gate, "--no-run")
    assert [c["status"] for c in of(report, "competition") if "auto memory" in c["message"]] == ["ok"]


def test_store_problems_are_reported(gate: Gate, project: Path) -> None:
    gate("install", "--project", str(project))
    assert gate("remember", "Deploys go out on Tuesdays only", "--kind", "decision")[0] == 0
    store = Path(ProjectPaths.for_cwd(project).private_store)
    (store / "m-broken.toml").write_text("this is = = not toml")
    code, report = doctor(gate, "--no-run")
    assert code == 0  # a corrupt file is skipped, never fatal
    assert any("m-broken.toml" in c["message"] for c in of(report, "store", "warn"))
    (ok,) = of(report, "store", "ok")
    assert "memories: 1" in ok["message"]


def test_invalid_config_is_broken(gate: Gate, project: Path) -> None:
    gate("install", "--project", str(project))
    (project / ".gate").mkdir()
    (project / ".gate" / "config.toml").write_text('state_dir = "/tmp/elsewhere"\n')
    code, report = doctor(gate, "--no-run")
    assert code == 1
    assert "state_dir" in of(report, "config", "fail")[0]["message"]


def test_enabled_plugin_that_is_not_installed_is_broken(gate: Gate, project: Path) -> None:
    write_json(settings_path(project), {"enabledPlugins": {"memory-gate@memory-gate": True}})
    code, report = doctor(gate, "--no-run")
    assert code == 1
    assert "not installed" in of(report, "plugin", "fail")[0]["message"]


def test_installed_plugin_counts_as_wiring(gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin install as Claude Code 2.1.332 records it; its launcher runs with GATE_PYTHON (no setup)."""
    repo = Path(__file__).resolve().parents[1]
    plugins = Path.home() / ".claude" / "plugins"
    write_json(
        plugins / "installed_plugins.json",
        {
            "version": 2,
            "plugins": {
                "memory-gate@memory-gate": [
                    {"scope": "project", "installPath": str(repo), "version": "0.1.0", "projectPath": str(project)}
                ]
            },
        },
    )
    write_json(settings_path(project), {"enabledPlugins": {"memory-gate@memory-gate": True}})
    monkeypatch.setenv("GATE_PYTHON", sys.executable)
    code, report = doctor(gate)
    assert code == 0, [c for c in report["checks"] if c["status"] == "fail"]
    assert of(report, "plugin", "ok")
    runs = of(report, "hooks")
    assert {c["details"]["event"] for c in runs} == set(wiring.EVENT_NAMES)
    assert all(c["status"] == "ok" and c["details"]["source"].startswith("plugin") for c in runs)
    assert not (plugins / "data").exists()  # GATE_PYTHON: nothing was set up


def test_recent_hook_failures_are_reported(gate: Gate, project: Path) -> None:
    gate("install", "--project", str(project))
    log = Path(error_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({"ts": "2999-01-01T00:00:00Z", "event": "Stop", "error": "KeyError"}) + "\n")
    _, report = doctor(gate, "--no-run")
    (recent,) = of(report, "errors", "warn")
    assert "KeyError" in recent["message"] and str(log) in recent["hint"]


def test_doctor_runs_without_gate_on_path(project: Path) -> None:
    import subprocess

    env = {"HOME": os.environ["HOME"], "GATE_HOME": os.environ["GATE_HOME"]}
    script = Path(sys.executable).parent / "gate"
    subprocess.run([str(script), "install", "--project", str(project)], env=env, check=True, capture_output=True)
    proc = subprocess.run(
        [str(script), "doctor", "--project", str(project), "--json"], env=env, capture_output=True, text=True
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, [c for c in report["checks"] if c["status"] == "fail"]
    assert of(report, "path", "info")


# --- a fresh install, and a teammate's machine ----------------------------------------------------------------


def test_a_fresh_install_is_clean(gate: Gate, project: Path) -> None:
    """Right after `gate install` on an empty store, with Claude Code's defaults: no warning at all, with or
    without running the hooks (no index yet is not an index behind; auto memory on is information)."""
    assert gate("install", "--project", str(project))[0] == 0
    for args in (("--no-run",), ()):
        code, out, _ = gate("doctor", *args)
        assert code == 0, out
        assert "WARN" not in out and "FAIL" not in out, out
        assert out.rstrip().endswith("all good"), out
        assert "auto memory is on" in out  # still said, as information


def test_an_empty_store_with_an_index_behind_is_still_reported_once_it_has_memories(gate: Gate, project: Path) -> None:
    """The empty-store rule must not hide a real lag: a memory file the index has not seen is reported."""
    gate("install", "--project", str(project))
    assert gate("remember", "Deploys go out on Tuesdays only", "--kind", "decision")[0] == 0
    store_dir = Path(ProjectPaths.for_cwd(project).private_store)
    (written,) = list(store_dir.rglob("*.toml"))
    copy = written.with_name("m-0123456789ab.toml")
    copy.write_text(written.read_text().replace(written.stem, copy.stem).replace("Tuesdays", "Thursdays"))
    _, report = doctor(gate, "--no-run")
    assert any("behind" in c["message"] for c in of(report, "store", "warn")), report


def test_doctor_on_a_teammate_machine_without_gate_set_up_says_so(
    gate: Gate, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committed settings of a project wired on one machine, seen from another (a HOME of its own)."""
    assert gate("install", "--project", str(project))[0] == 0
    (tmp_path / "teammate-home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "teammate-home"))
    code, report = doctor(gate)
    assert code == 1
    (fail,) = of(report, "wiring", "fail")
    assert "launcher" in fail["message"] and "does not exist" in fail["message"]
    assert "gate install" in fail["hint"]
    # Running the hooks shows what Claude Code gets there: nothing, and the one line saying how to set gate up.
    runs = of(report, "hooks", "fail")
    assert len(runs) == len(wiring.EVENT_NAMES)
    assert all("not set up on this machine" in c["message"] for c in runs)
    # `gate install` on that machine changes no byte of the committed file and turns the hooks on.
    before = settings_path(project).read_bytes()
    assert gate("install", "--project", str(project))[0] == 0
    assert settings_path(project).read_bytes() == before
    code, report = doctor(gate)
    assert code == 0, [c for c in report["checks"] if c["status"] == "fail"]


def test_doctor_names_a_committed_interpreter_of_another_machine(gate: Gate, project: Path, tmp_path: Path) -> None:
    """Settings written by an older gate name one machine's interpreter; on any other machine it does not exist."""
    write_json(settings_path(project), gate_settings(shlex.quote(str(tmp_path / "elsewhere" / "python")) + " -P"))
    code, report = doctor(gate, "--no-run")
    assert code == 1
    (fail,) = of(report, "wiring", "fail")
    assert "does not exist on this machine" in fail["message"] and "another machine" in fail["message"]
    assert "gate install" in fail["hint"]


def test_doctor_names_a_launcher_whose_interpreter_is_gone(gate: Gate, project: Path, tmp_path: Path) -> None:
    python = tmp_path / "gone" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    assert gate("install", "--project", str(project), "--python", str(python))[0] == 0
    python.unlink()
    code, report = doctor(gate)
    assert code == 1
    (fail,) = of(report, "wiring", "fail")
    assert str(python) in fail["message"] and "does not exist" in fail["message"]
    assert all("does not exist" in c["message"] for c in of(report, "hooks", "fail"))


def test_doctor_warns_when_the_project_settings_name_this_machine(gate: Gate, project: Path) -> None:
    """Settings an older gate wrote run here but break every teammate: a warning, and `gate install` fixes it."""
    write_json(settings_path(project), gate_settings(wiring.hook_command(sys.executable).removesuffix(wiring.MARKER)))
    code, report = doctor(gate, "--no-run")
    assert code == 0
    # (the settings here are hand-made: their matchers are also named, in a finding of their own)
    (warning,) = [w for w in of(report, "wiring", "warn") if "wired by an earlier gate" not in w["message"]]
    assert sys.executable in warning["message"] and "teammate" in warning["message"]
    assert gate("install", "--project", str(project))[0] == 0
    _, report = doctor(gate, "--no-run")
    assert not of(report, "wiring", "warn")


# --- allow rules for gate's own commands ---------------------------------------------------------------------


def _with_gate_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`gate` on PATH as install.sh links it, so gate's messages (and these rules) spell it `gate`."""
    bin_dir = tmp_path / "on-path"
    bin_dir.mkdir()
    (bin_dir / "gate").symlink_to(Path(sys.executable).parent / "gate")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def test_allow_rules_in_place_are_ok(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _with_gate_on_path(monkeypatch, tmp_path)
    gate("install", "--project", str(project))
    (check,) = of(doctor(gate, "--no-run")[1], "permissions")
    assert check["status"] == "ok" and "`gate remember`" in check["message"] and "project" in check["message"]


def test_missing_allow_rules_are_a_warning(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Hooks wired by hand (or by an older gate) without the rules: every gate command asks for approval."""
    _with_gate_on_path(monkeypatch, tmp_path)
    gate("install", "--project", str(project))
    data = json.loads(settings_path(project).read_text())
    del data["permissions"]
    write_json(settings_path(project), data)
    code, report = doctor(gate, "--no-run")
    (check,) = of(report, "permissions", "warn")
    assert code == 0  # not broken: the agent can still run them, after a click
    assert "`gate search`" in check["message"] and "gate install" in check["hint"]
    wanted = ("search", "show", "remember", "verify", "done")
    assert check["details"]["missing"] == [f"Bash(gate {sub} *)" for sub in wanted]


def test_an_absolute_spelling_the_committed_rules_miss_is_said(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """gate not on PATH: the messages name the script by absolute path, which project rules never hold — a
    project-scope install allows it in the local settings; without them (say, a project installed on this
    machine before gate was moved off PATH) doctor says so and how to add them."""
    monkeypatch.setenv("PATH", str(tmp_path))
    gate("install", "--project", str(project))
    (check,) = of(doctor(gate, "--no-run")[1], "permissions", "ok")
    assert "local" in check["message"]
    (project / ".claude" / "settings.local.json").unlink()
    (check,) = of(doctor(gate, "--no-run")[1], "permissions", "info")
    assert str(Path(sys.executable).parent / "gate") in check["message"]
    # runnable as written: `gate` is not on PATH, so the hint spells it as the messages do
    assert f"`{Path(sys.executable).parent / 'gate'} install --scope local --permissions-only`" in check["hint"]
    gate("install", "--project", str(project), "--scope", "local", "--permissions-only")
    (check,) = of(doctor(gate, "--no-run")[1], "permissions", "ok")
    assert "local" in check["message"]


def test_project_rules_in_a_folder_claude_code_does_not_trust_are_said(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Claude Code ignores a project's allow rules until its trust dialog was accepted there."""
    _with_gate_on_path(monkeypatch, tmp_path)
    gate("install", "--project", str(project))
    state = Path.home() / ".claude.json"
    state.write_text(json.dumps({"projects": {str(project.parent): {"hasTrustDialogAccepted": True}}}))
    (check,) = of(doctor(gate, "--no-run")[1], "permissions", "info")
    assert "trust" in check["message"] and "trust dialog" in check["hint"]
    state.write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}))
    assert of(doctor(gate, "--no-run")[1], "permissions", "ok")


def test_broken_rules_layer_is_named_by_file_line_and_key(gate: Gate, project: Path) -> None:
    """A rules file that does not parse, and values of the wrong kind or out of range, are each a FAIL naming
    the file, the line and the key, with a hint; a key gate does not know is a WARN."""
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text(
        '# tuned for this repository\n[fire]\nmax_per_prompt = 2\nmin_z = "high"\nattainable_share = 3\n'
        "max_per_promt = 4\n\n[index]\nmax_lines = -1\n"
    )
    (rules / "topic_shift.toml").write_text("[shift]\nnovelty_threshold = 0.7\npair_weight 0.5\n")
    code, report = doctor(gate, "--no-run")
    assert code == 1
    failures = [c["message"] for c in of(report, "rules", "fail")]
    assert f"{rules / 'recall.toml'}:4: fire.min_z is a string" in failures[0] and "number" in failures[0]
    assert failures[1].startswith(f"{rules / 'recall.toml'}:5: fire.attainable_share is 3") and "0..1" in failures[1]
    assert failures[2].startswith(f"{rules / 'recall.toml'}:9: index.max_lines is -1") and "at least 0" in failures[2]
    assert failures[3].startswith(f"{rules / 'topic_shift.toml'}:3: does not parse")
    assert len(failures) == 4
    assert all(c["hint"] for c in of(report, "rules", "fail"))
    (unknown,) = of(report, "rules", "warn")
    assert unknown["message"].startswith(f"{rules / 'recall.toml'}:6: fire.max_per_promt is not a rule")


def test_rules_layer_of_right_kinds_passes(gate: Gate, project: Path) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[fire]\nmin_z = 3\nmax_per_prompt = 2\n")
    (rules / "secrets.toml").write_text('[[pattern]]\nname = "internal token"\nregex = "itk_[0-9a-f]{32}"\n')
    _, report = doctor(gate, "--no-run")
    assert not of(report, "rules", "fail") and not of(report, "rules", "warn"), of(report, "rules")
    (ok,) = of(report, "rules", "ok")
    assert str(rules) in ok["message"]


def test_bad_regex_in_a_rules_layer_fails(gate: Gate, project: Path) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "secrets.toml").write_text('[[pattern]]\nname = "internal token"\nregex = "itk_[0-9a-f"\n')
    _, report = doctor(gate, "--no-run")
    (bad,) = of(report, "rules", "fail")
    assert bad["message"].startswith(f"{rules / 'secrets.toml'}:3: pattern[1].regex is not a regular expression")


def test_rules_problem_in_a_later_array_entry_names_its_line(gate: Gate, project: Path) -> None:
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "secrets.toml").write_text(
        '[[pattern]]\nname = "one"\nregex = "one_[a-z]+"\n\n[[pattern]]\nname = "two"\nregex = 5\n'
    )
    _, report = doctor(gate, "--no-run")
    (bad,) = of(report, "rules", "fail")
    assert bad["message"].startswith(f"{rules / 'secrets.toml'}:7: pattern[2].regex is a whole number")


def test_the_plugin_pages_and_the_doctor_agree_on_where_the_rules_go_and_how_it_uninstalls() -> None:
    """docs/install.md told plugin users to allow gate's commands in user scope while doctor said local scope; and
    its `claude plugin uninstall` line, without --scope, fails for the project-scope install it documents
    (measured: Claude Code 2.1.332 refuses it, the plugin being enabled in the project's settings.json)."""
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "install.md").read_text()
    installed = re.findall(r"^claude plugin install memory-gate@memory-gate --scope (\w+)$", page, re.M)
    assert installed == ["project"]
    assert re.findall(r"^claude plugin uninstall memory-gate@memory-gate(.*)$", page, re.M) == [" --scope project"]
    rules = re.findall(r"^\S+/venv/bin/gate install --permissions-only (--scope \w+)$", page, re.M)
    assert rules == ["--scope local"]  # as doctor's hint (test_an_absolute_spelling_the_committed_rules_miss_is_said)
    assert re.search(r"^\S+/venv/bin/gate uninstall --scope local$", page, re.M)  # and taken back before it goes
