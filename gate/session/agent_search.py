"""The agent's own searches: `gate search` and `gate show` run by the agent of a Claude Code session.

Claude Code runs its Bash tool with CLAUDECODE=1 and CLAUDE_CODE_SESSION_ID set to the session's id (measured on
2.1.332). A search the agent runs there is delivery like any gate's: what it returned is marked delivered in the
session's ledger (the recall gate does not inject it again in this window), and the audit gets one record (event
AgentSearch or AgentShow, gate agent_search) for `gate stats`. A person running the same command in a terminal
records nothing. Whether the search meets the turn's request is seen at its PreToolUse, which knows whether the
call is the main agent's or a subagent's.
"""

from __future__ import annotations

import os
from typing import Any

GATE = "agent_search"
EVENTS = {"search": "AgentSearch", "show": "AgentShow"}


def agent_session(environ: dict[str, str] | None = None) -> str | None:
    """The id of the Claude Code session whose agent runs this command, or None when it is not an agent's."""
    env = os.environ if environ is None else environ
    if env.get("CLAUDECODE") != "1" or env.get("GATE_DOCTOR"):
        return None
    session = env.get("CLAUDE_CODE_SESSION_ID", "").strip()
    return session[:200] or None


def record(command: str, query: str, found: list[str], project_root: str, *, chars: int = 0,
           project_id: str = "") -> bool:
    """Record an agent's search (`command` "search": `found` its hits) or show ("show": `found` the memory
    opened). Returns whether it was recorded. Never raises: the command's own output matters more."""
    session = agent_session()
    if session is None:
        return False
    try:
        from gate.session.audit import write_audit
        from gate.session.ledger import open_ledger
        from gate.settings import load_settings

        with open_ledger(session) as ledger:
            asked = ledger.search_request is not None
            ledger.record_agent_search(command, query, found)
        settings = load_settings(project_root, problems=[])
        if not settings.get("audit", True):
            return True
        entry: dict[str, Any] = {
            "session": session,
            "project": project_root,
            "project_id": project_id,  # what `gate stats` selects by (every checkout of a repository)
            "event": EVENTS[command],
            "gate": GATE,
            # A search's hits are delivered as any gate's are; a show opens one memory the agent asked for.
            "decision": "fired" if command == "search" and found else "opened" if found else "skipped",
            "reason": f"AGENT_{command.upper()}" if found else "AGENT_SEARCH_NO_HITS",
            "delivered": found if command == "search" else [],
            "opened": found if command == "show" else [],
            "query": query[:200],
            "asked": asked,
            "chars": chars,
        }
        write_audit(entry, int(settings.get("audit_max_bytes", 20_000_000)), sources=[query])
        return True
    except Exception:  # recording is bookkeeping: a failure must not cost the agent its search
        try:
            from gate.session.audit import write_error

            write_error(EVENTS.get(command, "AgentSearch"), RuntimeError("could not record the agent's search"),
                        project=project_root, project_id=project_id or None)
        except Exception:
            pass
        return False
