"""Promises the README makes that a single edit could break without any other test noticing (issue #25).

Each test here names the edit it guards against; scripts/mutations.py applies each edit, runs the test that
must catch it, and reverts it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import fixed_bug_turn
from support import stop_verdict, without_fix_guard

from gate.memory.model import Link, Memory
from gate.memory.store.files import write_memory
from gate.paths import ProjectPaths, audit_log_file, error_log_file


def run_hook(event: dict[str, Any], env: dict[str, str] | None = None) -> tuple[str, int]:
    """The real hook entry point in a fresh process, as Claude Code runs it: (stdout, exit status)."""
    import subprocess

    from support import HANG_S

    proc = subprocess.run([sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(),
                          capture_output=True, timeout=HANG_S, env={**os.environ, **(env or {})})
    return proc.stdout.decode(), proc.returncode


def audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def event(project: Path, name: str, session: str = "sess-1", **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "transcript_path": str(project / "missing.jsonl"), "cwd": str(project),
            "hook_event_name": name, **fields}


# --- zero cross-project leakage, on every path that delivers ----------------------------------------------------
def foreign(project: Path, other: Path, memory: Memory) -> Memory:
    """Another project's private memory whose file sits in this project's private store (copied by hand,
    restored from a backup into the wrong place): the project it names is not this one."""
    memory.project = str(other.resolve())
    write_memory(Path(ProjectPaths.for_cwd(project).private_store), memory, private=True)
    return memory


def own(project: Path, memory: Memory) -> Memory:
    memory.project = str(project.resolve())
    write_memory(Path(ProjectPaths.for_cwd(project).private_store), memory, private=True)
    return memory


@pytest.fixture
def neighbours(project: Path, tmp_path: Path) -> dict[str, str]:
    """This project's memories, each beside a look-alike of another project that the same words, links or
    triggers would bring back if a delivering path forgot to check the project."""
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "ledger.py").write_text("ROUNDING = 'half-even'\n")
    own(project, Memory(id="m-hit", kind="finding", title="Checkout service times out under load",
                        links=[Link("relates", "m-own-out"), Link("relates", "m-far-out")]))
    own(project, Memory(id="m-own-out", kind="finding", title="Load balancer keeps idle sockets a minute"))
    own(project, Memory(id="m-own-in", kind="fix", title="Raised the pool to twenty per worker",
                        links=[Link("fixes", "m-hit")]))
    own(project, Memory(id="m-own-rule", kind="directive", title="Open a pull request for every change"))
    own(project, Memory(id="m-own-gotcha", kind="gotcha", title="Totals round half-even",
                        triggers=["path:src/**"]))
    foreign(project, other, Memory(id="m-far-out", kind="finding", title="Grafana boards live under infra"))
    foreign(project, other, Memory(id="m-far-in", kind="fix", title="Pinned the worker image to a digest",
                                   links=[Link("fixes", "m-hit")]))
    foreign(project, other, Memory(id="m-far-hit", kind="finding",
                                   title="Checkout service times out under load on Mondays"))
    foreign(project, other, Memory(id="m-far-rule", kind="directive", title="Deploy only on Tuesdays"))
    foreign(project, other, Memory(id="m-far-gotcha", kind="gotcha", title="Totals round up, always",
                                   triggers=["path:src/**"]))
    return {"other": str(other)}


FOREIGN = ("m-far-out", "m-far-in", "m-far-hit", "m-far-rule", "m-far-gotcha")


def test_search_and_its_related_appendix_keep_to_the_project(gate, neighbours: dict[str, str]) -> None:
    """Edit caught: the related appendix (one hop of links) or the ranked hits dropping the project check."""
    code, out, err = gate("search", "checkout service times out under load", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [hit["id"] for hit in data["hits"]] == ["m-hit"]
    related = {r["id"] for r in data["related"]}
    assert related == {"m-own-out", "m-own-in"}  # this project's links, both directions, come back ...
    assert not related & set(FOREIGN)  # ... the other project's, linked the same ways, do not


def test_every_delivering_hook_keeps_to_the_project(project: Path, neighbours: dict[str, str]) -> None:
    """Session start, the recall gate (hits and "Related (one link away)") and the path anchors: each delivers
    this project's memory and never the other project's one beside it."""
    answers = {}
    for name, fields in [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "Why does the checkout service time out under load?"}),
        # (a Read: the prompt's recall asked for the agent's own search, so an Edit now would be refused first)
        ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": str(project / "src" / "ledger.py")},
                        "tool_use_id": "toolu_1"}),
    ]:
        out, code = run_hook(event(project, name, **fields))
        assert code == 0
        assert out, f"{name} delivered nothing: {audit()[-1]}"
        answers[name] = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        delivered = audit()[-1]["delivered"]
        assert not set(delivered) & set(FOREIGN), (name, delivered)
        assert not [m for m in FOREIGN if m in answers[name]], (name, answers[name])
    assert "m-own-rule" in answers["SessionStart"]
    assert "m-hit" in answers["UserPromptSubmit"] and "m-own-in" in answers["UserPromptSubmit"]
    assert "m-own-gotcha" in answers["PreToolUse"]


# --- the write-back cap ---------------------------------------------------------------------------------------------
def consequential_stops(project: Path, transcript: Path, session: str, turns: int,
                        env: dict[str, str] | None = None) -> int:
    """`turns` turns that each settle a fix and store nothing; each block is answered (stop_hook_active). (One fix
    turn again and again: the fix guard is off, so each is consequential and the cap is what is tested.)"""
    without_fix_guard(project)
    blocks = 0
    for _ in range(turns):
        out, code = run_hook(event(project, "Stop", session, transcript_path=str(transcript),
                                   stop_hook_active=False), env=env)
        assert code == 0
        if out:
            assert stop_verdict(out) is not None
            blocks += 1
            out, code = run_hook(event(project, "Stop", session, transcript_path=str(transcript),
                                       stop_hook_active=True), env=env)
            assert (out, code) == ("", 0)
    return blocks


@pytest.fixture
def fix_transcript(project: Path, tmp_path: Path) -> Path:
    path = tmp_path / "fix.jsonl"
    path.write_text(fixed_bug_turn(str(project)).text())
    return path


@pytest.mark.parametrize("where", ["environment", "project config"])
def test_the_writeback_cap_follows_the_setting(project: Path, fix_transcript: Path, where: str) -> None:
    """Edit caught: `writeback_cap` ignored (the cap hard-coded to its default of 5)."""
    env = None
    if where == "environment":
        cap, env = 2, {"GATE_WRITEBACK_CAP": "2"}
    else:
        cap = 3
        (project / ".gate").mkdir()
        (project / ".gate" / "config.toml").write_text("writeback_cap = 3\n")
    assert consequential_stops(project, fix_transcript, "capped", 6, env) == cap
    reasons = [r["reason"] for r in audit() if r["event"] == "Stop" and r["session"] == "capped"]
    assert reasons.count("BLOCKED_WRITEBACK") == cap and reasons.count("ALLOW_CAPPED") == 6 - cap


def test_the_writeback_cap_holds_for_the_session_across_compaction(project: Path, fix_transcript: Path) -> None:
    """"At most 5 times a session": edit caught — re-arming the ledger at compaction also resets the block
    count (deliveries are re-armed there; the cap is not)."""
    assert consequential_stops(project, fix_transcript, "long", 5) == 5
    assert run_hook(event(project, "PreCompact", "long", trigger="auto", custom_instructions="")) == ("", 0)
    run_hook(event(project, "SessionStart", "long", source="compact"))
    assert audit()[-1]["reason"] in ("FIRED_AFTER_COMPACTION", "SKIP_NOTHING_STANDING")  # the re-arm ran
    assert consequential_stops(project, fix_transcript, "long", 3) == 0
    after = [r["reason"] for r in audit() if r["event"] == "Stop" and r["session"] == "long"][-3:]
    assert after == ["ALLOW_CAPPED"] * 3
    # the cap is per session: another one still gets its blocks
    assert consequential_stops(project, fix_transcript, "another", 1) == 1


# --- failing open on anything, BaseException included ---------------------------------------------------------------
@pytest.mark.parametrize("raised", [KeyboardInterrupt(), SystemExit(2), SystemExit("bye"), GeneratorExit()],
                         ids=["KeyboardInterrupt", "SystemExit-2", "SystemExit-text", "GeneratorExit"])
@pytest.mark.parametrize("event_name", ["UserPromptSubmit", "Stop"])
def test_a_base_exception_inside_a_gate_fails_open(
    project: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException, event_name: str
) -> None:
    """Edit caught: the hook's fail-open narrowed to `except Exception` — a KeyboardInterrupt or SystemExit
    raised inside a gate would escape instead of ending with exit 0, no output and one log line."""
    import importlib

    from support import hook_in_process

    import gate.hook

    module_name, function = gate.hook.HANDLERS[event_name], gate.hook.ENTRY

    def gate_that_raises(ctx: Any, ledger: Any) -> Any:
        raise raised

    monkeypatch.setattr(importlib.import_module(module_name), function, gate_that_raises)
    try:
        out = hook_in_process(event(project, event_name, prompt="When does the reserve waterfall trigger?",
                                    stop_hook_active=False, last_assistant_message="We decided to use X."))
    except BaseException as escaped:  # exactly what the hook must not let through
        pytest.fail(f"{type(escaped).__name__} escaped the hook instead of failing open", pytrace=False)
    assert out == ""  # hook_in_process asserted main() returned 0
    errors = Path(error_log_file()).read_text().splitlines()
    assert len(errors) == 1 and type(raised).__name__ in errors[0]
    last = audit()[-1]
    assert (last["event"], last["reason"], last["error"]) == (event_name, "FAILED_OPEN", type(raised).__name__)


# --- the command `gate install` writes ----------------------------------------------------------------------------
def installed_commands(project: Path, scope: str) -> dict[str, list[str]]:
    """Every hook command the settings file holds, by event, exactly as written (whatever its form)."""
    data = json.loads((project / ".claude" / SETTINGS_FILE[scope]).read_text())
    return {
        name: [hook["command"] for group in groups for hook in group["hooks"] if hook.get("type") == "command"]
        for name, groups in data["hooks"].items()
    }


def run_as_claude_code(command: str, project: Path, stdin: str) -> tuple[int, str, str]:
    """As Claude Code runs a command hook: `/bin/sh -c COMMAND` in the project, the event on stdin, a bare
    environment (no PATH, no virtualenv)."""
    import subprocess

    from support import HANG_S

    env = {"HOME": os.environ["HOME"], "GATE_HOME": os.environ["GATE_HOME"], "CLAUDE_PROJECT_DIR": str(project)}
    proc = subprocess.run(["/bin/sh", "-c", command], input=stdin, capture_output=True, text=True, env=env,
                          cwd=project, timeout=HANG_S)  # the timeout only turns a hang into a failure
    return proc.returncode, proc.stdout, proc.stderr


SETTINGS_FILE = {"project": "settings.json", "local": "settings.local.json"}


@pytest.mark.parametrize("scope", list(SETTINGS_FILE))
def test_the_command_gate_install_writes_exits_zero_with_each_answer(
    gate, project: Path, tmp_path: Path, scope: str
) -> None:
    """The settings file's own commands, run the way Claude Code runs them, in a project that has a `gate/`
    package of its own (which must not shadow gate's). Edits caught: the command no longer calling the hook,
    calling it from the project's `sys.path`, or exiting non-zero."""
    shadow = project / "gate"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise SystemExit(3)\n")
    (shadow / "hook.py").write_text("def main():\n    print('not gate')\n    return 3\n")
    (project / "src").mkdir()
    (project / "src" / "ledger.py").write_text("x = 1\n")
    memories = {}
    for key, args in {
        "decision": ("Reserve account waterfall triggers at 30 days overdue", "--kind", "decision"),
        "directive": ("Never push to main directly; open a pull request", "--kind", "directive"),
        "gotcha": ("Ledger totals must round half-even", "--kind", "gotcha", "--on", "path:src/**"),
    }.items():
        code, out, err = gate("remember", *args)
        assert code == 0, err
        memories[key] = out.strip()
    code, _, err = gate("install", "--project", str(project), "--scope", scope)
    assert code == 0, err
    commands = installed_commands(project, scope)
    transcript = tmp_path / "fix.jsonl"
    transcript.write_text(fixed_bug_turn(str(project)).text())

    def answer(name: str, **fields: Any) -> str:
        (command,) = commands[name]
        payload = {**event(project, name, "installed", **fields)}
        code, out, err = run_as_claude_code(command, project, json.dumps(payload))
        assert code == 0, (name, command, err)
        assert not Path(error_log_file()).exists(), Path(error_log_file()).read_text()  # no fail-open either
        return out

    def context(out: str, name: str) -> str:
        data = json.loads(out)
        assert data["hookSpecificOutput"]["hookEventName"] == name
        return data["hookSpecificOutput"]["additionalContext"]

    assert memories["directive"] in context(answer("SessionStart", source="startup"), "SessionStart")
    recalled = context(answer("UserPromptSubmit", prompt="When does the reserve account waterfall trigger?"),
                       "UserPromptSubmit")
    assert recalled.startswith("MEMORY SEARCH REQUIRED") and memories["decision"] in recalled
    # (a Read: the prompt's recall asked for the agent's own search, so an Edit now would be refused first)
    anchored = answer("PreToolUse", tool_name="Read", tool_input={"file_path": str(project / "src" / "ledger.py")},
                      tool_use_id="toolu_1")
    assert memories["gotcha"] in context(anchored, "PreToolUse")
    blocked = stop_verdict(answer("Stop", transcript_path=str(transcript), stop_hook_active=False))
    assert blocked is not None and blocked["decision"] == "block" and blocked["reason"].startswith("MEMORY CHECK")
    assert answer("Stop", transcript_path=str(transcript), stop_hook_active=True) == ""
    assert answer("PreCompact", trigger="manual", custom_instructions="") == ""
    # and a broken event: still exit 0 and silent, with one line in the error log
    (command,) = commands["UserPromptSubmit"]
    code, out, err = run_as_claude_code(command, project, "{not json")
    assert (code, out) == (0, ""), err
    assert len(Path(error_log_file()).read_text().splitlines()) == 1
