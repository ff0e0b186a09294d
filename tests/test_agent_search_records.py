"""The search the agent must run (issue 29): what an agent's own `gate search` / `gate show` returns is delivery.

Claude Code runs its Bash tool with CLAUDECODE=1 and CLAUDE_CODE_SESSION_ID (measured on 2.1.332): a search run
there is marked delivered in that session's ledger and leaves an audit record for `gate stats`; the same command
run by a person records nothing. (That it meets the turn's search request is seen at its PreToolUse:
tests/test_search_first.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gate.paths import audit_log_file
from gate.session.ledger import ledger_path, open_ledger, read_ledger

SESSION = "agent-sess-1"


def audit() -> list[dict[str, Any]]:
    path = Path(audit_log_file())
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def stored(gate) -> dict[str, str]:
    ids = {}
    for key, title in {
        "waterfall": "Reserve account waterfall triggers at 30 days overdue",
        "rounding": "Ledger rounding is banker's rounding (ROUND_HALF_EVEN)",
    }.items():
        code, out, err = gate("remember", title, "--kind", "decision")
        assert code == 0, err
        ids[key] = out.strip()
    return ids


@pytest.fixture
def as_agent(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)
    return SESSION


def test_an_agents_search_is_delivered_in_its_session(gate, stored, as_agent: str, project: Path) -> None:
    with open_ledger(as_agent) as ledger:
        ledger.ask_search("prompt-1", "FIRED_TOPIC_SHIFT")
    code, out, _ = gate("search", "reserve", "waterfall")
    assert code == 0 and stored["waterfall"] in out

    ledger = read_ledger(as_agent)
    assert ledger is not None
    assert stored["waterfall"] in ledger.delivered and stored["rounding"] not in ledger.delivered
    [entry] = ledger.agent_searches
    assert entry["command"] == "search" and entry["query"] == "reserve waterfall"
    assert entry["found"] == [stored["waterfall"]]

    [record] = [r for r in audit() if r.get("gate") == "agent_search"]
    assert record["event"] == "AgentSearch" and record["decision"] == "fired"
    assert record["session"] == as_agent and record["project"] == str(project)
    assert record["delivered"] == [stored["waterfall"]] and record["asked"] is True
    assert record["query"] == "reserve waterfall" and record["chars"] > 0


def test_a_search_with_no_hits_is_recorded_as_a_search(gate, stored, as_agent: str) -> None:
    code, out, _ = gate("search", "kubernetes", "--json")
    assert code == 0 and json.loads(out)["hits"] == []
    [record] = [r for r in audit() if r.get("gate") == "agent_search"]
    assert record["decision"] == "skipped" and record["reason"] == "AGENT_SEARCH_NO_HITS"
    assert record["delivered"] == [] and record["asked"] is False
    ledger = read_ledger(as_agent)
    assert ledger is not None and ledger.agent_searches[0]["found"] == []


def test_an_agents_show_opens_the_memory(gate, stored, as_agent: str) -> None:
    code, out, _ = gate("show", stored["rounding"])
    assert code == 0 and "ROUND_HALF_EVEN" in out
    ledger = read_ledger(as_agent)
    assert ledger is not None and ledger.delivered == [stored["rounding"]]
    [record] = [r for r in audit() if r.get("gate") == "agent_search"]
    assert record["event"] == "AgentShow" and record["decision"] == "opened"
    assert record["opened"] == [stored["rounding"]] and record["delivered"] == []


def test_a_persons_search_records_nothing(gate, stored, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", SESSION)  # without CLAUDECODE=1 it is not the agent's Bash
    code, out, _ = gate("search", "reserve", "waterfall")
    assert code == 0 and stored["waterfall"] in out
    code, _, _ = gate("show", stored["rounding"])
    assert code == 0
    assert not Path(ledger_path(SESSION)).exists()
    assert not [r for r in audit() if r.get("gate") == "agent_search"]


def test_an_agents_search_with_the_audit_off_still_counts_in_the_ledger(
    gate, stored, as_agent: str, project: Path
) -> None:
    (project / ".gate").mkdir()
    (project / ".gate" / "config.toml").write_text("audit = false\n")
    code, _, _ = gate("search", "ledger", "rounding")
    assert code == 0
    ledger = read_ledger(as_agent)
    assert ledger is not None and stored["rounding"] in ledger.delivered
    assert not [r for r in audit() if r.get("gate") == "agent_search"]


def test_recording_never_costs_the_search(gate, stored, as_agent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import gate.session.ledger as ledger_module

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("the sessions directory is gone")

    monkeypatch.setattr(ledger_module.open_ledger, "__enter__", broken)
    code, out, _ = gate("search", "reserve", "waterfall")
    assert code == 0 and stored["waterfall"] in out


# --- gate stats ---------------------------------------------------------------------------------------------------


def _hook_record(project: Path, event: str, **fields: Any) -> None:
    from gate.session.audit import write_audit

    write_audit({"session": SESSION, "project": str(project), "event": event, "gate": "recall",
                 "decision": "skipped", "reason": "SKIP_NO_HITS", "latency_ms": 10.0, **fields})


def test_stats_count_the_agents_searches_what_they_found_and_what_was_opened(
    gate, stored, as_agent: str, project: Path
) -> None:
    _hook_record(project, "UserPromptSubmit", search_asked=True)
    _hook_record(project, "PreToolUse", gate="agent_search", decision="refused", reason="REFUSED_SEARCH_FIRST",
                 search_first="refused")
    _hook_record(project, "PreToolUse", gate="anchors", search_first="seen")
    with open_ledger(as_agent) as ledger:
        ledger.ask_search("prompt-1", "FIRED_TOPIC_SHIFT")
    assert gate("search", "reserve", "waterfall")[0] == 0
    assert gate("search", "ledger", "rounding", "--json")[0] == 0
    assert gate("search", "kubernetes")[0] == 0
    assert gate("show", stored["rounding"])[0] == 0
    _hook_record(project, "UserPromptSubmit", search_asked=True)  # a later prompt: asked, never searched

    code, out, _ = gate("stats", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["agent_search"] == {
        "asked": 2, "searched_when_asked": 1, "refused": 1, "reminded": 0,
        "searches": 3, "searches_asked": 3, "searches_with_hits": 2, "found": 2, "distinct_found": 2,
        "shows": 1, "opened": 1, "opened_of_found": 1,
    }
    totals = report["injection"]["totals"]
    assert totals["delivered_by_agent_search"] == 2 and totals["delivered"] >= 2
    assert "agent_search" in report["injection"]["gates"]

    code, text, _ = gate("stats")
    assert ("Agent searches: asked at 2 prompts → searched in 1 (1 refused a change first) · 3 searches found "
            "2 memories (2 distinct) · opened 1 with `gate show`") in text
    assert "2 by the agent's searches" in text
    assert "Agent search:" not in text  # not the generic line of another injecting gate


def test_stats_say_nothing_of_agent_searches_where_there_were_none(gate, stored) -> None:
    code, text, _ = gate("stats")
    assert code == 0 and "Agent searches" not in text and "by the agent's searches" not in text
