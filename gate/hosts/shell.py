"""Which agent's shell runs a gate command (`gate remember` …), from what each CLI sets for the commands its agent
runs (read from the pinned CLIs):

- Claude Code 2.1: CLAUDECODE=1 and CLAUDE_CODE_SESSION_ID, the session's id (as its hooks see it);
- Codex CLI 0.171: CODEX_THREAD_ID, the thread's id, which is the session_id its hooks are given;
- Gemini CLI 0.61: GEMINI_CLI=1 (its shell tool's identification variable); no session id: Gemini gives its
  hooks GEMINI_SESSION_ID, not its shell.

A CLI started from another agent's shell inherits the outer one's variables as well. The session whose hooks
ran last (its ledger is the newest) is then the inner one, which runs this command: the outer agent waits on the
inner CLI's run. Without a ledger to tell, the inner agent is taken to be the one that is not Claude Code (the
usual outer host), Gemini before Codex.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

CLAUDE_CODE, CODEX, GEMINI = "claude-code", "codex", "gemini"
AGENTS = (CLAUDE_CODE, CODEX, GEMINI)
# Without a ledger to tell: the first of these present wins (the inner agent, see above).
_PRECEDENCE = (GEMINI, CODEX, CLAUDE_CODE)
MAX_SESSION_CHARS = 200


@dataclass(frozen=True)
class AgentShell:
    agent: str  # one of AGENTS, as the hooks' audit records name it
    session: str  # the session's id as its hooks see it; "" when the CLI does not tell its shell


def _candidates(env: Mapping[str, str]) -> dict[str, str]:
    """agent -> session id, for every agent whose variables are set."""
    found: dict[str, str] = {}
    claude_session = env.get("CLAUDE_CODE_SESSION_ID", "").strip()[:MAX_SESSION_CHARS]
    if env.get("CLAUDECODE") == "1" or claude_session:  # (either one, as `gate remember` has always read them)
        found[CLAUDE_CODE] = claude_session
    thread = env.get("CODEX_THREAD_ID", "").strip()
    if thread:
        found[CODEX] = thread[:MAX_SESSION_CHARS]
    if env.get("GEMINI_CLI") == "1":
        found[GEMINI] = ""
    return found


def _ledger_time(session: str) -> float | None:
    """When the hooks of this session last wrote its ledger; None without one."""
    if not session:
        return None
    from gate.session.ledger import ledger_path

    try:
        return os.stat(ledger_path(session)).st_mtime
    except (OSError, ValueError):
        return None


def agent_shell(environ: Mapping[str, str] | None = None) -> AgentShell | None:
    """The agent whose shell runs this process, or None: a person's terminal, a script, `gate doctor`."""
    env = os.environ if environ is None else environ
    if env.get("GATE_DOCTOR"):
        return None
    found = _candidates(env)
    if not found:
        return None
    if len(found) > 1:
        times = {agent: t for agent, session in found.items() if (t := _ledger_time(session)) is not None}
        if len(times) == len(found):  # every one has hooks that ran: the newest is the inner one
            agent = max(times, key=lambda name: times[name])
            return AgentShell(agent, found[agent])
    agent = next(name for name in _PRECEDENCE if name in found)
    return AgentShell(agent, found[agent])
