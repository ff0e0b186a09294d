"""`gate trace`: one turn reconstructed from the audit — every recall candidate with its disposition code
(a superseded memory and another project's memory rejected, with why), and the Stop verdict with its evidence.
Hook events go through the real entry point, as in tests/test_stats.py (whose sandbox and seed are reused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_stats import ROUNDING, Sandbox, seed


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    sandbox = Sandbox(tmp_path_factory.mktemp("trace"))
    seed(sandbox)
    t = sandbox.transcript("sess-t")
    sandbox.hook("SessionStart", "sess-t", source="startup")
    sandbox.prompt("sess-t", ROUNDING)
    t.say("We decided to keep half-up rounding because the ledger expects it.")
    sandbox.stop("sess-t")
    t.hook_feedback("MEMORY CHECK: this turn made a decision.")
    t.tool("Bash", {"command": 'gate remember "Invoice totals keep half-up rounding" --kind decision'}, "m-keep01")
    sandbox.stop("sess-t", active=True)
    return sandbox


def _candidates(trace: dict[str, Any]) -> dict[str, dict[str, Any]]:
    recall = next(e for e in trace["evaluations"] if e["event"] == "UserPromptSubmit")["recall"]
    return {c["id"]: c for c in recall["search"]["candidates"]}


def test_trace_shows_superseded_and_other_project_candidates_rejected(box: Sandbox) -> None:
    trace = box.gate_json("trace", "--last")
    assert (trace["session"], trace["prompt"], trace["prompts"]) == ("sess-t", 1, 1)
    candidates = _candidates(trace)
    old = candidates["m-round-old"]
    assert old["disposition"] == "SUPERSEDED_SUCCESSOR_AVAILABLE" and old["detail"] == "m-round-new"
    assert old["title"] == "Invoice totals round with banker's rounding"
    elsewhere = candidates["m-elsewhere"]
    assert elsewhere["disposition"] == "OTHER_PROJECT" and elsewhere["detail"] == "/elsewhere/other"
    assert candidates["m-round-new"]["disposition"] == "ADMITTED"
    assert all(isinstance(c["score"], float) for c in candidates.values())
    recall = trace["evaluations"][0]["recall"]
    assert [d["id"] for d in recall["delivered"]] == ["m-round-new"]
    assert recall["search"]["cliff"] <= recall["search"]["top_score"]


def test_trace_shows_the_stop_evidence_and_verdict(box: Sandbox) -> None:
    trace = box.gate_json("trace", "--session", "sess-t", "--prompt", "1")
    stops = [e for e in trace["evaluations"] if e["event"] == "Stop"]
    assert [(s["decision"], s["reason"]) for s in stops] == [
        ("blocked", "BLOCKED_WRITEBACK"),
        ("allowed", "ALLOW_STOP_ACTIVE"),
    ]
    blocked, after = stops[0]["stop"], stops[1]["stop"]
    assert blocked["evidence"] == ["decision"]
    assert blocked["evidence_quotes"] == ["We decided to keep half-up rounding because the ledger expects it."]
    assert blocked["store_decision"] is None and blocked["block_number"] == 1
    assert after["previous_block_outcome"] == "stored"


def test_trace_text(box: Sandbox) -> None:
    text = box.gate("trace")
    assert "gate trace — session sess-t, prompt 1 of 1" in text
    assert "SUPERSEDED_SUCCESSOR_AVAILABLE  m-round-old" in text and "→ successor m-round-new (ADMITTED)" in text
    assert "OTHER_PROJECT" in text and "(belongs to /elsewhere/other)" in text
    assert "Stop → blocked BLOCKED_WRITEBACK" in text and "outcome of the previous block: stored" in text
    before = box.gate("trace", "--session", "sess-t", "--prompt", "0")
    assert "SessionStart → fired FIRED_SESSION_START" in before and "m-ruff" in before


def test_trace_errors_name_what_exists(box: Sandbox) -> None:
    out = box.gate("trace", "--session", "sess-t", "--prompt", "7", check=False)
    assert "session sess-t has prompts 1 to 1" in out
    out = box.gate("trace", "--session", "no-such-session", check=False)
    assert "no session 'no-such-session'" in out and "recent sessions: sess-t" in out


def test_trace_of_an_empty_log(tmp_path: Path) -> None:
    out = Sandbox(tmp_path).gate("trace", check=False)
    assert "no evaluation of project" in out and "gate stats" in out


# ---------------------------------------------------------------------------------------------------------------
# reconstruction, without processes


def _prompt(session: str, **extra: Any) -> dict[str, Any]:
    return {"ts": "2025-11-01T10:00:00Z", "session": session, "project": "/p", "event": "UserPromptSubmit",
            "gate": "recall", "decision": "fired", "reason": "FIRED_TOPIC_SHIFT", "latency_ms": 1.0, **extra}


def test_an_admitted_candidate_cut_by_the_budget_is_dropped_and_truncated_traces_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gate.stats.trace import build_trace, render_text

    monkeypatch.setenv("GATE_HOME", str(tmp_path))  # titles are looked up in a store: never the user's own

    trace = {"terms": ["a"], "top_score": 2.0, "cliff": 1.0, "candidates": [
        {"id": "m-aaa", "score": 2.0, "disposition": "ADMITTED"},
        {"id": "m-bbb", "score": 1.5, "disposition": "ADMITTED"},
        {"id": "m-ccc", "score": 0.5, "disposition": "BELOW_CLIFF"},
    ]}
    records = [
        _prompt("s", delivered=["m-aaa"], dropped=["m-bbb"], trace=trace),
        _prompt("s", trace={"truncated": True}),
        {**_prompt("s"), "synthetic": True},  # a doctor's run is never a prompt of the session
    ]
    first = build_trace(records, project="/p", session="s", prompt=1)
    dispositions = [c["disposition"] for c in first["evaluations"][0]["recall"]["search"]["candidates"]]
    assert dispositions == ["ADMITTED", "DROPPED_OVER_BUDGET", "BELOW_CLIFF"]
    last = build_trace(records, project="/p", session=None, prompt=None)
    assert last["prompt"] == 2 and last["prompts"] == 2
    assert "too large to keep" in render_text(last)
