"""Issue 45: which agent wrote a memory. `gate remember` runs in the agent's shell; each CLI sets variables of its
own there (gate/hosts/shell.py). The agent is kept in the memory's file and in one audit record of the write, and
`gate stats` counts per agent the memories written beside what was delivered and blocked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.hosts.shell import AgentShell, agent_shell
from gate.memory.model import Memory
from gate.memory.store.files import read_memory, to_toml
from gate.memory.store.store import Store
from gate.paths import audit_log_file
from gate.session.ledger import open_ledger


def _audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- which agent's shell ------------------------------------------------------------------------------------------
def test_each_clis_shell_names_its_agent() -> None:
    assert agent_shell({"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "c-1"}) == AgentShell("claude-code", "c-1")
    assert agent_shell({"CLAUDE_CODE_SESSION_ID": "c-2"}) == AgentShell("claude-code", "c-2")
    assert agent_shell({"CODEX_THREAD_ID": "019a-thread"}) == AgentShell("codex", "019a-thread")
    assert agent_shell({"GEMINI_CLI": "1"}) == AgentShell("gemini", "")  # Gemini gives its shell no session id
    assert agent_shell({}) is None  # a person's terminal, a script
    assert agent_shell({"CLAUDECODE": "0", "GEMINI_CLI": "", "CODEX_THREAD_ID": " "}) is None
    assert agent_shell({"CODEX_THREAD_ID": "t", "GATE_DOCTOR": "1"}) is None  # doctor's own test runs


def test_a_cli_started_from_another_agents_shell_is_the_one_that_writes() -> None:
    """Codex run from Claude Code's shell inherits CLAUDECODE: the session whose hooks ran last is the inner one."""
    env = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "outer-claude", "CODEX_THREAD_ID": "inner-codex"}
    # without ledgers to tell: the agent that is not Claude Code (the usual outer host)
    assert agent_shell(env) == AgentShell("codex", "inner-codex")
    for session in ("inner-codex", "outer-claude"):
        with open_ledger(session):
            pass
    os.utime(_ledger("inner-codex"), (1_000_000, 1_000_000))  # Claude Code's hooks ran last: the inner one here
    assert agent_shell(env) == AgentShell("claude-code", "outer-claude")
    assert agent_shell({**env, "GEMINI_CLI": "1"}) == AgentShell("gemini", "")  # Gemini has no ledger to compare


def _ledger(session: str) -> str:
    from gate.session.ledger import ledger_path

    return ledger_path(session)


# --- the memory and the audit record ------------------------------------------------------------------------------
def _remember(project: Path, title: str, env: dict[str, str]) -> tuple[str, Memory]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID",
                                                              "CODEX_THREAD_ID", "GEMINI_CLI")}
    run = subprocess.run([sys.executable, "-m", "gate.cli", "remember", title, "--project", str(project)],
                         env={**clean, **env}, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    memory_id = run.stdout.strip()
    return memory_id, Store.for_cwd(str(project)).get(memory_id)


@pytest.mark.parametrize(("env", "agent", "session"), [
    ({"CODEX_THREAD_ID": "019a2b3c-codex-thread"}, "codex", "019a2b3c-codex-thread"),
    ({"GEMINI_CLI": "1"}, "gemini", ""),
    ({"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "claude-sess"}, "claude-code", "claude-sess"),
])
def test_a_memory_written_in_an_agents_shell_records_the_agent(
    project: Path, env: dict[str, str], agent: str, session: str
) -> None:
    memory_id, memory = _remember(project, f"Invoice exports are written by the {agent} batch job", env)
    assert (memory.agent, memory.session, memory.source) == (agent, session, "agent")
    writes = [r for r in _audit() if r.get("event") == "Remember"]
    assert len(writes) == 1, writes
    assert writes[0]["agent"] == agent and writes[0]["id"] == memory_id and writes[0]["session"] == session
    assert writes[0]["project"] == str(project.resolve()) and writes[0]["decision"] == "stored"


def test_a_memory_no_agent_wrote_names_none_and_audits_nothing(project: Path) -> None:
    _, memory = _remember(project, "Deploys need approval from the release manager", {})
    assert memory.agent == ""
    assert not [r for r in _audit() if r.get("event") == "Remember"]


def test_the_agent_is_in_the_file_only_when_known_and_old_files_still_read(tmp_path: Path) -> None:
    with_agent = Memory(id="m-abc123", kind="finding", title="Exports run nightly at two", agent="codex")
    assert 'agent = "codex"' in to_toml(with_agent)
    without = Memory(id="m-abc124", kind="finding", title="Exports run nightly at three")
    assert "\nagent =" not in to_toml(without)  # a file as gate wrote it before
    path = tmp_path / "m-abc124.toml"
    path.write_text(to_toml(without), encoding="utf-8")
    assert read_memory(path).agent == ""
    path = tmp_path / "m-abc123.toml"
    path.write_text(to_toml(with_agent), encoding="utf-8")
    assert read_memory(path).agent == "codex"


def test_show_names_the_agent_that_wrote_it(gate, project: Path) -> None:
    memory_id, _ = _remember(project, "Exports are signed with the nightly key", {"GEMINI_CLI": "1"})
    code, out, _ = gate("show", memory_id)
    assert code == 0 and "by agent (gemini)" in out.splitlines()[0], out


# --- gate stats -------------------------------------------------------------------------------------------------
def test_stats_counts_the_memories_each_agent_wrote(project: Path, isolated_home: Path) -> None:
    root = str(project.resolve())
    base = {"ts": "2026-12-01T09:00:00Z", "project": root}
    records = [
        {**base, "session": "c1", "event": "UserPromptSubmit", "gate": "recall", "decision": "fired",
         "reason": "FIRED_TOPIC_SHIFT", "delivered": ["m-1"]},
        {**base, "session": "x1", "event": "Stop", "gate": "writeback", "decision": "blocked",
         "reason": "BLOCKED_WRITEBACK", "agent": "codex"},
        {**base, "session": "x1", "event": "Remember", "gate": "remember", "decision": "stored",
         "reason": "AGENT_REMEMBER", "id": "m-2", "agent": "codex"},
        {**base, "session": "", "event": "Remember", "gate": "remember", "decision": "stored",
         "reason": "AGENT_REMEMBER", "id": "m-3", "agent": "gemini"},
        {**base, "session": "", "event": "Remember", "gate": "remember", "decision": "stored",
         "reason": "AGENT_REMEMBER", "id": "m-4", "agent": "gemini"},
    ]
    state = isolated_home / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    env = {**os.environ}
    run = subprocess.run([sys.executable, "-m", "gate.cli", "stats", "--json"], env=env, cwd=project,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["agents"] == {
        "claude-code": {"sessions": 1, "evaluations": 1, "delivered": 1, "blocks": 0, "reminders": 0, "written": 0},
        "codex": {"sessions": 1, "evaluations": 1, "delivered": 0, "blocks": 1, "reminders": 0, "written": 1},
        "gemini": {"sessions": 0, "evaluations": 0, "delivered": 0, "blocks": 0, "reminders": 0, "written": 2},
    }
    assert report["evaluations"] == 2  # a write is no hook evaluation
    text = subprocess.run([sys.executable, "-m", "gate.cli", "stats"], env=env, cwd=project,
                          capture_output=True, text=True, timeout=60).stdout
    assert ("codex 1 session, 0 memories delivered, 1 memory written, 1 block, 0 reminders; "
            "gemini 0 sessions, 0 memories delivered, 2 memories written, 0 blocks, 0 reminders") in text, text
