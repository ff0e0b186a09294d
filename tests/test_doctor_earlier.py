"""Settings an earlier gate wrote (its matchers, its events, its committed commands): `gate doctor` names every
entry `gate install` would change, as one warning per file with the fix, and `gate install` run again replaces
exactly gate's entries (one group per event, the user's own entries as they were). The earlier forms are built
here from the strings as those gates wrote them, not from today's code."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import doctor_checks, doctor_report

from gate.hosts.codex import install as codex_install
from gate.hosts.gemini import install as gemini_install
from gate.install import wiring

Gate = Callable[..., tuple[int, str, str]]

MARK = "# memory-gate"
LAUNCH = 'l="$HOME/.local/share/memory-gate/hook"; [ -f "$l" ] && exec /bin/sh "$l"'
# Claude Code's PreToolUse matcher before the anchored expression with MCP tools (926c776), and before the spawns.
OLD_TOOLS = "Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob|Bash|Agent|Task"
OLDER_TOOLS = "Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob|Bash"
SESSION_SOURCES = "startup|resume|clear|compact"
# The committed commands of 926c776: one for every event, SessionStart's with a long systemMessage.
OLD_PORTABLE = f"{LAUNCH}; cat >/dev/null 2>&1; exit 0 {MARK}"
OLD_SESSION_START = (
    f"""{LAUNCH}; cat >/dev/null 2>&1; echo '{{"systemMessage":"memory-gate is not set up on this machine, so its """
    """hooks do nothing; to set it up, run ./install.sh /path/to/this/project in a memory-gate checkout"}'; """
    f"exit 0 {MARK}"
)
# Codex's hooks file before SubagentStart and the spawn and MCP tools (0d27107), and Gemini's before AfterTool
# (0ba897f).
CODEX_OLD_COMMAND = f"{LAUNCH} --agent codex; cat >/dev/null 2>&1; exit 0 {MARK}"
GEMINI_OLD_COMMAND = (
    f"{LAUNCH} --agent gemini; cat >/dev/null 2>&1; echo 'memory-gate: the hooks of this project run memory-gate, "
    "which is not set up on this machine, so they do nothing here; to set it up, run ./install.sh "
    "/path/to/this/project in a memory-gate checkout (one command: it installs gate and runs gate install for this "
    f"project)' >&2; exit 0 {MARK}"
)

# The user's own hooks, which an install must leave where they are.
MINE_TOOL = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo my-bash-check"}]}
MINE_STOP = {"hooks": [{"type": "command", "command": "echo my-stop"}]}


def group(command: str, timeout: int, matcher: str | None = None) -> dict[str, Any]:
    hooks = [{"type": "command", "command": command, "timeout": timeout}]
    return {"matcher": matcher, "hooks": hooks} if matcher is not None else {"hooks": hooks}


def claude_926c776(command: str, session_start: str) -> dict[str, Any]:
    """Claude Code's hooks as gate 926c776 wrote them (SubagentStop wired, the unanchored tool list)."""
    return {
        "SessionStart": [group(session_start, 10, SESSION_SOURCES)],
        "UserPromptSubmit": [group(command, 10)],
        "PreToolUse": [group(command, 5, OLD_TOOLS)],
        "Stop": [group(command, 10)],
        "PreCompact": [group(command, 10)],
        "SubagentStop": [group(command, 5)],
    }


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def theirs(data: dict[str, Any]) -> dict[str, list[Any]]:
    """The user's own entries (their groups with gate's entries taken out), event by event."""
    kept: dict[str, list[Any]] = {}
    for event, groups in data["hooks"].items():
        for g in groups:
            hooks = [h for h in g["hooks"] if not wiring.is_gate_command(h.get("command"))]
            if hooks:
                kept.setdefault(event, []).append({**g, "hooks": hooks})
    return kept


def gate_groups(data: dict[str, Any]) -> dict[str, list[Any]]:
    return {event: [g for g in groups if any(wiring.is_gate_command(h.get("command")) for h in g["hooks"])]
            for event, groups in data["hooks"].items()}


def earlier_findings(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [c for c in doctor_checks(report, check) if "wired by an earlier gate" in c["message"]]


def test_claude_code_settings_of_earlier_gates_are_one_finding_per_file_and_install_replaces_them_exactly(
    gate: Gate, project: Path
) -> None:
    assert gate("install", "--launcher-only", "--project", str(project))[0] == 0
    shared = project / ".claude" / "settings.json"
    hooks = claude_926c776(OLD_PORTABLE, OLD_SESSION_START)
    hooks["PreToolUse"].insert(0, MINE_TOOL)
    hooks["Stop"].append(MINE_STOP)
    hooks["UserPromptSubmit"][0]["hooks"].append({"type": "command", "command": "echo in-gates-group"})
    write(shared, {"model": "opus", "hooks": hooks})
    # An older one still in the local file: this machine's interpreter, no spawns in the matcher, no SubagentStop.
    command = f"{shlex.quote(sys.executable)} -P -m gate.hook {MARK}"
    local = project / ".claude" / "settings.local.json"
    older = claude_926c776(command, command)
    older["PreToolUse"] = [group(command, 5, OLDER_TOOLS)]
    del older["SubagentStop"]
    write(local, {"hooks": older})

    code, report = doctor_report(gate, "--no-run")
    found = {c["details"]["scope"]: c for c in earlier_findings(report, "wiring")}
    assert set(found) == {"project", "local"}, report["checks"]
    assert all(c["status"] == "warn" for c in found.values())
    project_finding, local_finding = found["project"], found["local"]
    assert str(shared) in project_finding["message"] and f'"{OLD_TOOLS}"' in project_finding["message"]
    assert "SessionStart runs an earlier gate's committed command" in project_finding["message"]
    assert "not wired" not in project_finding["message"]
    assert "gate install --scope project" in project_finding["hint"]
    assert f'"{OLDER_TOOLS}"' in local_finding["message"] and "SubagentStop is not wired" in local_finding["message"]
    assert "gate install --scope local" in local_finding["hint"]
    # A plain finding, not an error: every event is wired by the project file, and nothing is broken.
    assert code == 0 and report["ok"] is True, [c for c in report["checks"] if c["status"] == "fail"]

    for scope, path in (("project", shared), ("local", local)):
        before = json.loads(path.read_text())
        assert gate("install", "--scope", scope, "--project", str(project))[0] == 0
        after = json.loads(path.read_text())
        assert theirs(after) == theirs(before)  # the user's own entries, as they were and where they were
        assert gate_groups(after) == {event: [g] for event, g in wiring.desired_groups(
            wiring.commands_for(scope, sys.executable)).items()}  # one group per event, no earlier one left
        assert wiring.is_installed_exactly(after, wiring.commands_for(scope, sys.executable))
        text = path.read_text()
        assert gate("install", "--scope", scope, "--project", str(project))[0] == 0
        assert path.read_text() == text  # run again: nothing changes
    assert json.loads(shared.read_text())["model"] == "opus"
    assert json.loads(shared.read_text())["hooks"]["PreToolUse"][0] == MINE_TOOL
    code, report = doctor_report(gate, "--no-run")
    assert not earlier_findings(report, "wiring"), report["checks"]
    assert code == 0


def test_a_hand_made_partial_wiring_stays_broken(gate: Gate, project: Path) -> None:
    """Only an event an earlier gate did not wire yet makes a missing event a warning: without UserPromptSubmit
    gate's recall never runs, whoever wrote the file."""
    assert gate("install", "--launcher-only", "--project", str(project))[0] == 0
    hooks = claude_926c776(OLD_PORTABLE, OLD_SESSION_START)
    del hooks["UserPromptSubmit"]
    write(project / ".claude" / "settings.json", {"hooks": hooks})
    code, report = doctor_report(gate, "--no-run")
    assert code == 1 and any("not wired: UserPromptSubmit" in c["message"]
                             for c in doctor_checks(report, "wiring", "fail"))
    (finding,) = earlier_findings(report, "wiring")
    assert "UserPromptSubmit is not wired" in finding["message"]


def test_codex_hooks_of_an_earlier_gate_are_named_and_install_replaces_them(gate: Gate, project: Path) -> None:
    assert gate("install", "--launcher-only", "--project", str(project))[0] == 0
    path = project / ".codex" / "hooks.json"
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo my-codex-check"}]}
    write(path, {"hooks": {
        "SessionStart": [group(CODEX_OLD_COMMAND, 10, "startup|resume|clear|compact|fork")],
        "UserPromptSubmit": [group(CODEX_OLD_COMMAND, 10)],
        "PreToolUse": [mine, group(CODEX_OLD_COMMAND, 5, "Bash|apply_patch")],
        "Stop": [group(CODEX_OLD_COMMAND, 10)],
        "PreCompact": [group(CODEX_OLD_COMMAND, 10)],
    }})
    code, report = doctor_report(gate, "--agent", "codex", "--no-run")
    (finding,) = earlier_findings(report, "codex")
    assert finding["status"] == "warn"
    assert "SubagentStart is not wired" in finding["message"] and '"Bash|apply_patch"' in finding["message"]
    assert "gate install --agent codex --scope project" in finding["hint"]
    assert not [c for c in report["checks"] if c["status"] == "fail"], report["checks"]
    assert code == 0
    before = json.loads(path.read_text())
    assert gate("install", "--agent", "codex", "--project", str(project))[0] == 0
    after = json.loads(path.read_text())
    assert theirs(after) == theirs(before) and after["hooks"]["PreToolUse"][0] == mine
    command = codex_install.hook_command("project", sys.executable)
    assert gate_groups(after) == {event: [g] for event, g in wiring.desired_groups(
        dict.fromkeys(codex_install.EVENT_NAMES, command), codex_install.EVENTS).items()}
    code, report = doctor_report(gate, "--agent", "codex", "--no-run")
    assert not earlier_findings(report, "codex") and code == 0, report["checks"]


def test_gemini_settings_of_an_earlier_gate_are_named_and_install_replaces_them(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert gate("install", "--launcher-only", "--project", str(project))[0] == 0
    path = project / ".gemini" / "settings.json"
    mine = {"hooks": [{"type": "command", "command": "echo my-after-agent"}]}
    write(path, {"hooks": {
        "SessionStart": [group(GEMINI_OLD_COMMAND, 10_000)],
        "BeforeAgent": [group(GEMINI_OLD_COMMAND, 10_000)],
        "BeforeTool": [group(GEMINI_OLD_COMMAND, 5_000, "^(run_shell_command|replace|write_file)$")],
        "AfterAgent": [mine, group(GEMINI_OLD_COMMAND, 10_000)],
    }})
    code, report = doctor_report(gate, "--agent", "gemini", "--no-run")
    (finding,) = earlier_findings(report, "gemini")
    assert "AfterTool is not wired" in finding["message"] and "earlier gate's committed command" in finding["message"]
    assert "gate install --agent gemini --scope project" in finding["hint"]
    assert not [c for c in report["checks"] if c["status"] == "fail"], report["checks"]
    before = json.loads(path.read_text())
    assert gate("install", "--agent", "gemini", "--project", str(project))[0] == 0
    after = json.loads(path.read_text())
    assert theirs(after) == theirs(before) and after["hooks"]["AfterAgent"][0] == mine
    command = gemini_install.hook_command("project", sys.executable)
    assert gate_groups(after) == {event: [g] for event, g in wiring.desired_groups(
        dict.fromkeys(gemini_install.EVENT_NAMES, command), gemini_install.EVENTS).items()}
    code, report = doctor_report(gate, "--agent", "gemini", "--no-run")
    assert not earlier_findings(report, "gemini") and code == 0, report["checks"]


def _plugin(project: Path, root: Path) -> None:
    """A project-scope plugin install as Claude Code 2.1.332 records it, from `root`."""
    plugins = Path.home() / ".claude" / "plugins"
    write(plugins / "installed_plugins.json", {"version": 2, "plugins": {"memory-gate@memory-gate": [
        {"scope": "project", "installPath": str(root), "version": "0.1.0", "projectPath": str(project)}]}})
    write(project / ".claude" / "settings.json", {"enabledPlugins": {"memory-gate@memory-gate": True}})


def test_the_plugins_own_hooks_json_is_what_install_writes_and_an_earlier_one_is_named(
    gate: Gate, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATE_PYTHON", sys.executable)
    repo = Path(__file__).resolve().parents[1]
    _plugin(project, repo)
    code, report = doctor_report(gate, "--no-run")
    assert code == 0, report["checks"]
    assert not [c for c in report["checks"] if c["check"] in ("plugin", "wiring") and c["status"] != "ok"]
    # The plugin's hooks.json of 926c776: the unanchored tool list.
    old = tmp_path / "plugin-926c776"
    (old / "hooks").mkdir(parents=True)
    shutil.copy(repo / "hooks" / "run", old / "hooks" / "run")
    hooks = json.loads((repo / "hooks" / "hooks.json").read_text())
    hooks["hooks"]["PreToolUse"][0]["matcher"] = OLD_TOOLS
    (old / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    _plugin(project, old)
    code, report = doctor_report(gate, "--no-run")
    (finding,) = earlier_findings(report, "plugin")
    assert finding["status"] == "warn" and f'"{OLD_TOOLS}"' in finding["message"]
    assert "claude plugin update memory-gate@memory-gate" in finding["hint"]
    assert code == 0
