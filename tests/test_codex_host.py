"""The Codex CLI host (issue 45): its hook events read into gate's terms, gate's answers written in Codex's strict
schema, the hook told the agent by `--agent codex`, gate named by absolute path in its messages, and
`gate install|uninstall --agent codex`. The real CLI runs these in tests/e2e/test_codex.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate import render
from gate.hosts.codex import hook_io
from gate.hosts.codex import install as codex_install
from gate.install import launcher
from gate.paths import audit_log_file

SESSION = "01a25111-fb8e-7053-bb45-a4f96cfd02ca"
TURN = "01a25111-fba5-7e02-95a2-92e182a13662"
SHIFT = "When does the reserve account waterfall trigger?"
PATCH = "*** Begin Patch\n*** Update File: src/billing.py\n@@\n-a\n+b\n*** Add File: src/new.py\n+x\n*** End Patch\n"


def codex_event(project: Path, name: str, turn: str = TURN, **fields: Any) -> dict[str, Any]:
    """A Codex 0.171 hook event as `codex exec` writes it (transcript_path may be null)."""
    event = {"session_id": SESSION, "transcript_path": None, "cwd": str(project), "hook_event_name": name,
             "model": "gpt-5.5", "permission_mode": "bypassPermissions", **fields}
    if name != "SessionStart":
        event["turn_id"] = turn
    return event


def run_codex_hook(event: dict[str, Any], *agent: str) -> tuple[str, int]:
    argv = [*launcher.hook_argv(sys.executable), *(agent or ("--agent", "codex"))]
    proc = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True, timeout=60,
                          env=dict(os.environ))
    return proc.stdout.decode(), proc.returncode


@pytest.fixture(autouse=True)
def _render_default() -> Any:
    yield
    render.ABSOLUTE = False  # a test that reads an event in-process must not leave its spelling behind


# --- reading an event -------------------------------------------------------------------------------------------


def test_an_apply_patch_is_read_as_an_edit_of_every_file_it_names(project: Path) -> None:
    read = hook_io.read_event(codex_event(project, "PreToolUse", tool_name="apply_patch",
                                          tool_input={"command": PATCH}, tool_use_id="call_1"))
    assert read["tool_name"] == "Edit" and read["codex_tool_name"] == "apply_patch"
    assert read["tool_input"]["file_path"] == str(project / "src" / "billing.py")
    assert read["tool_input"]["file_paths"] == [str(project / "src" / "billing.py"), str(project / "src" / "new.py")]
    assert read["tool_input"]["files"] == ["src/billing.py", "src/new.py"]
    added = hook_io.read_event(codex_event(project, "PreToolUse", tool_name="apply_patch", tool_input={
        "command": "*** Begin Patch\n*** Add File: /abs/new.py\n+x\n*** End Patch\n"}))
    assert added["tool_name"] == "Write" and added["tool_input"]["file_path"] == "/abs/new.py"


def test_shell_calls_turn_ids_and_sources_are_read_in_gates_terms(project: Path) -> None:
    bash = hook_io.read_event(codex_event(project, "PreToolUse", tool_name="Bash",
                                          tool_input={"command": "pytest -q"}))
    assert (bash["tool_name"], bash["tool_input"]) == ("Bash", {"command": "pytest -q"})
    argv = hook_io.read_event(codex_event(project, "PreToolUse", tool_name="shell",
                                          tool_input={"command": ["bash", "-lc", "rm -f x"]}))
    assert (argv["tool_name"], argv["tool_input"]) == ("Bash", {"command": "rm -f x"})
    prompt = hook_io.read_event(codex_event(project, "UserPromptSubmit", prompt="hi"))
    assert prompt["prompt_id"] == TURN and "transcript_path" not in prompt and prompt["agent"] == "codex"
    fork = hook_io.read_event(codex_event(project, "SessionStart", source="fork"))
    assert fork["source"] == "resume"
    assert render.ABSOLUTE is True


# --- writing an answer ------------------------------------------------------------------------------------------


def test_answers_codex_takes_pass_and_any_other_is_refused() -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "search first"}}
    assert hook_io.write_verdict("PreToolUse", deny) == deny
    context = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}
    assert hook_io.write_verdict("UserPromptSubmit", context) == context
    assert hook_io.write_verdict("Stop", {"decision": "block", "reason": "MEMORY CHECK"}) == {
        "decision": "block", "reason": "MEMORY CHECK"}
    assert hook_io.write_verdict("Stop", None) is None
    refused = [
        ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}),
        ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                               "permissionDecisionReason": "r"}}),
        ("PreToolUse", {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                               "permissionDecisionReason": " "}}),
        ("UserPromptSubmit", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x",
                                                     "sessionTitle": "t"}}),
        ("SessionStart", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}),
        ("Stop", {"decision": "block", "reason": ""}),
        ("Stop", {"decision": "block", "reason": "r", "continue": True}),
        ("PreCompact", {"hookSpecificOutput": {"hookEventName": "PreCompact"}}),
    ]
    for event_name, output in refused:
        with pytest.raises(ValueError):
            hook_io.write_verdict(event_name, output)


# --- the hook, told the agent ----------------------------------------------------------------------------------


def test_the_first_apply_patch_of_an_asking_turn_is_refused_in_codexs_schema(project: Path, gate) -> None:
    code, _, err = gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    assert code == 0, err
    out, code = run_codex_hook(codex_event(project, "UserPromptSubmit", prompt=SHIFT))
    assert code == 0 and "MEMORY SEARCH REQUIRED" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    patch = codex_event(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": PATCH},
                        tool_use_id="call_2")
    out, code = run_codex_hook(patch)
    answer = json.loads(out)
    assert code == 0 and answer["hookSpecificOutput"]["permissionDecision"] == "deny", answer
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
    # The refusal names gate by the installation's own path: Codex's login shell may not find plain `gate`.
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"`{Path(sys.executable).parent / 'gate'} search WORDS`" in reason, reason
    # Once a turn: the same patch again passes.
    out, code = run_codex_hook(patch)
    assert code == 0 and "permissionDecision" not in (json.loads(out)["hookSpecificOutput"] if out else {})
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    hooks = [r for r in records if r["event"] in ("UserPromptSubmit", "PreToolUse")]
    assert next(r["decision"] for r in hooks if r["event"] == "PreToolUse") == "refused"
    assert len(hooks) == 3 and {r.get("agent") for r in hooks} == {"codex"}, hooks


def test_an_agent_gate_does_not_serve_fails_open(project: Path) -> None:
    out, code = run_codex_hook(codex_event(project, "UserPromptSubmit", prompt=SHIFT), "--agent", "nobody")
    assert (out, code) == ("", 0)


def test_codex_messages_name_gate_by_path_even_when_plain_gate_is_on_path(tmp_path: Path, monkeypatch) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    for name in ("python", "gate"):
        (python.parent / name).write_text("#!/bin/sh\n")
        (python.parent / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(python.parent))
    assert render.gate_command(str(python)) == "gate"
    assert render.gate_command(str(python), absolute=True) == str(python.parent / "gate")


def test_the_launcher_passes_the_agent_on() -> None:
    assert launcher.text(sys.executable).count('"$@"') == 1


# --- install and uninstall --------------------------------------------------------------------------------------


def test_install_wires_codex_in_the_project_and_uninstall_leaves_the_file_as_it_was(project: Path, gate) -> None:
    hooks = project / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    own = '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "echo mine"}]}]\n  }\n}\n'
    hooks.write_text(own)
    code, out, err = gate("install", "--agent", "codex", "--project", str(project))
    assert code == 0, err
    data = json.loads(hooks.read_text())
    assert set(data["hooks"]) == set(codex_install.EVENT_NAMES)
    assert data["hooks"]["Stop"][0]["hooks"][0]["command"] == "echo mine"  # the user's own entry, first
    ours = data["hooks"]["PreToolUse"][0]
    assert ours["matcher"] == codex_install.TOOL_MATCHER and "--agent codex" in ours["hooks"][0]["command"]
    assert "SubagentStart" in data["hooks"] and "matcher" not in data["hooks"]["SubagentStart"][0]
    assert "$HOME/.local/share/memory-gate/hook" in ours["hooks"][0]["command"]  # no path of this machine
    assert str(Path.home()) not in hooks.read_text()
    rules = Path.home() / ".codex" / "rules" / "memory-gate.rules"
    text = rules.read_text()
    for sub in ("search", "show", "remember", "verify"):
        assert f'prefix_rule(pattern = ["gate", "{sub}"], decision = "allow")' in text
        assert f'prefix_rule(pattern = ["{Path(sys.executable).parent / "gate"}", "{sub}"]' in text
    assert launcher.path().is_file()
    assert "/hooks" in err  # the one-time review the user must give
    before = hooks.read_text()
    assert gate("install", "--agent", "codex", "--project", str(project))[0] == 0
    assert hooks.read_text() == before  # again: nothing changes
    code, out, err = gate("uninstall", "--agent", "codex", "--project", str(project))
    assert code == 0, err
    assert hooks.read_text() == own
    assert rules.is_file()  # the machine's rules stay for other projects


def test_user_scope_goes_to_codex_home_and_its_uninstall_removes_gates_files(project: Path, gate, tmp_path,
                                                                             monkeypatch) -> None:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    code, _, err = gate("install", "--agent", "codex", "--scope", "user", "--project", str(project))
    assert code == 0, err
    command = json.loads((home / "hooks.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith(sys.executable) and command.endswith("--agent codex # memory-gate")
    assert (home / "rules" / "memory-gate.rules").is_file()
    assert not (project / ".codex").exists()
    code, _, err = gate("uninstall", "--agent", "codex", "--scope", "user", "--project", str(project))
    assert code == 0, err
    assert not (home / "hooks.json").exists() and not (home / "rules" / "memory-gate.rules").exists()


def test_codex_has_no_local_scope(project: Path, gate) -> None:
    code, _, err = gate("install", "--agent", "codex", "--scope", "local", "--project", str(project))
    assert code != 0 and "no local scope" in err


# --- doctor -----------------------------------------------------------------------------------------------------


def test_doctor_checks_codex_wiring_trust_rules_and_says_the_user_must_approve_the_hooks(project: Path, gate) -> None:
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert code == 1 and "gate is not wired into Codex" in out
    assert gate("install", "--agent", "codex", "--project", str(project))[0] == 0
    code, out, _ = gate("doctor", "--agent", "codex", "--project", str(project))
    assert code == 0, out
    assert "does not trust this project" in out and "/hooks" in out and "allowed without a prompt in Codex" in out
    assert out.count("ok    hooks:") == len(codex_install.EVENT_NAMES), out
    config = Path.home() / ".codex" / "config.toml"
    config.write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert "Codex trusts this project" in out
    # A PreToolUse matcher an older gate wrote (no spawns, no MCP tools) is named, with the fix; so is an event
    # it did not wire: one warning for the file (its hooks still run), not a failure.
    hooks = project / ".codex" / "hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"]["PreToolUse"][0]["matcher"] = "Bash|apply_patch"
    del data["hooks"]["SubagentStart"]
    hooks.write_text(json.dumps(data))
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert code == 0 and "wired by an earlier gate" in out and "PreToolUse's matcher" in out, out
    assert "SubagentStart is not wired" in out and "gate install --agent codex --scope project" in out, out
    assert gate("install", "--agent", "codex", "--project", str(project))[0] == 0
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert "earlier gate" not in out and "not wired" not in out, out
    # A hand-copied Claude Code command in .codex/hooks.json (no --agent codex) is named.
    hooks.write_text(hooks.read_text().replace(" --agent codex", ""))
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert code == 1 and "without `--agent codex`" in out
    # A launcher an older gate wrote drops the agent: named, with the fix.
    written = launcher.path().read_text()
    launcher.path().write_text(written.replace(' "$@"', ""))
    code, out, _ = gate("doctor", "--agent", "codex", "--no-run", "--project", str(project))
    assert code == 1 and "drops `--agent codex`" in out and "gate install --launcher-only" in out
    launcher.path().write_text(written)
    # Claude Code's doctor takes Codex's wiring in where gate is wired there.
    code, out, _ = gate("doctor", "--no-run", "--project", str(project))
    assert "without `--agent codex`" in out


# --- the hot path -----------------------------------------------------------------------------------------------

MODULES = """
import sys
sys.argv[1:] = AGENT
from gate.hook import main
main()
sys.stdout.write("\\n" + " ".join(sorted(sys.modules)))
"""


def _modules(event: dict[str, Any], agent: list[str]) -> set[str]:
    *switches, entry = launcher.hook_argv(sys.executable)
    code = entry.removesuffix("from gate.hook import entry; entry()") + "\n" + MODULES.replace("AGENT", repr(agent))
    proc = subprocess.run([*switches, code], input=json.dumps(event).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return set(proc.stdout.decode().rsplit("\n", 1)[-1].split())


def test_the_hook_imports_only_the_host_it_runs_for(project: Path) -> None:
    event = codex_event(project, "PreToolUse", tool_name="apply_patch", tool_input={"command": PATCH},
                        tool_use_id="call_3")
    _modules(event, ["--agent", "codex"])  # the first hook of a project builds what the next ones only read
    codex = _modules(event, ["--agent", "codex"])
    assert "gate.hosts.codex.hook_io" in codex
    assert not codex & {"gate.hosts.codex.install", "gate.hosts.codex.doctor", "gate.hosts.codex.rollout",
                        "gate.install", "json", "shlex"}, sorted(codex)
    claude = _modules({**event, "tool_name": "Read", "tool_input": {"file_path": "a.py"}}, [])
    assert not {m for m in claude if m.startswith("gate.hosts")}, sorted(claude)
