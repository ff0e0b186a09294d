"""The committed project-scope commands of Codex's and Gemini's hooks files (issue 44): Claude Code's short portable
command told the agent, no prose and no path of this machine; on a teammate's machine without gate the event is
drained and the hook exits 0 saying nothing; the longer commands an earlier gate committed are replaced by
`gate install` and removed by `gate uninstall`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from gate.hosts.codex import install as codex_install
from gate.hosts.gemini import install as gemini_install
from gate.install import wiring

PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")  # three words in a row: a sentence, not a command

AGENTS = {
    "codex": (codex_install, Path(".codex") / "hooks.json", "Stop"),
    "gemini": (gemini_install, Path(".gemini") / "settings.json", "AfterAgent"),
}


def commands(path: Path) -> dict[str, str]:
    return {e.event: e.command for e in wiring.find_gate_entries(json.loads(path.read_text()))}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_committed_command_is_claude_codes_told_the_agent_and_says_nothing(
    agent: str, project: Path, gate, tmp_path: Path
) -> None:
    module, relative, _ = AGENTS[agent]
    assert gate("install", "--agent", agent, "--project", str(project))[0] == 0
    wired = commands(project / relative)
    assert set(wired) == set(module.EVENT_NAMES)
    assert set(wired.values()) == {wiring.portable_command(("--agent", agent))}
    (command,) = set(wired.values())
    assert wiring.is_portable(command) and f'exec /bin/sh "$l" --agent {agent};' in command
    assert len(command) <= 140 and not PROSE.search(command), command
    assert str(Path.home()) not in (project / relative).read_text()
    teammate = tmp_path / "teammate-home"  # no launcher there
    teammate.mkdir()
    for event in module.EVENT_NAMES:
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps({"hook_event_name": event}),
                              capture_output=True, text=True, cwd=project, timeout=60,
                              env={"HOME": str(teammate), "GATE_HOME": os.environ["GATE_HOME"]})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), (event, done)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_commands_an_earlier_gate_committed_are_replaced_and_removed(agent: str, project: Path, gate) -> None:
    module, relative, own_event = AGENTS[agent]
    earlier = sorted(c for c in wiring.EARLIER_AGENT_PORTABLE if f"--agent {agent};" in c)
    assert len(earlier) == 2 and all(wiring.is_portable(c) for c in earlier)
    path = project / relative
    path.parent.mkdir()
    own = {"hooks": {own_event: [{"hooks": [{"type": "command", "command": "echo mine"}]}]}}
    for command in earlier:
        old = json.loads(json.dumps(own))
        for event, group in wiring.desired_groups(dict.fromkeys(module.EVENT_NAMES, command), module.EVENTS).items():
            old["hooks"].setdefault(event, []).append(group)
        old_text = json.dumps(old, indent=2) + "\n"
        path.write_text(old_text)
        assert "memory-gate" in command.split("echo", 1)[1]  # the prose an earlier gate committed
        assert gate("install", "--agent", agent, "--project", str(project))[0] == 0
        assert set(commands(path).values()) == {module.hook_command("project", "")}
        assert ">&2" not in path.read_text() and "not set up" not in path.read_text()
        assert json.loads(path.read_text())["hooks"][own_event][0]["hooks"][0]["command"] == "echo mine"
        path.write_text(old_text)
        assert gate("uninstall", "--agent", agent, "--project", str(project))[0] == 0
        assert json.loads(path.read_text()) == own


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_doctor_says_a_quiet_command_did_nothing_where_there_is_no_launcher(agent: str, project: Path, gate) -> None:
    """The command says nothing on a machine without gate, so doctor tells it by the command itself (a committed
    one, wiring.is_portable) and the missing launcher, not by what it said."""
    from gate.install import launcher

    assert gate("install", "--agent", agent, "--project", str(project))[0] == 0
    launcher.path().unlink()
    code, out, _ = gate("doctor", "--agent", agent, "--project", str(project))
    assert code == 1 and "gate is not set up on this machine (no launcher" in out, out
    assert "ok    hooks:" not in out, out
