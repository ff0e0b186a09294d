"""`gate replay --labels … --queries FILE`: the agent's own searches, scored beside the hook's hits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_replay import Transcript

from gate.replay.engine import SessionRun, StepResult
from gate.replay.labels import Labels
from gate.replay.queries import score_queries
from gate.replay.timeline import Step, Timeline

Gate = Callable[..., tuple[int, str, str]]
T = "/sessions/one.jsonl"


def _step(event: dict[str, Any], line: int, delivered: list[str] | None = None, indexed: list[str] | None = None,
          hits: list[str] | None = None, query: str | None = None) -> StepResult:
    outcome = SimpleNamespace(decision="fired" if delivered else "skipped", reason="TEST", delivered=delivered or [],
                              extra={"indexed": indexed} if indexed else {})
    result = StepResult(Step(event, line, 0, line), outcome)  # type: ignore[arg-type]
    result.agent_query, result.agent_hits = query, hits
    return result


def _prompt(line: int, **kwargs: Any) -> StepResult:
    return _step({"hook_event_name": "UserPromptSubmit", "prompt": "p"}, line, **kwargs)


def test_scores_add_up_by_hand_window_compaction_noise_and_union() -> None:
    """A synthetic session whose every figure is worked out by hand (see the comments)."""
    results = [
        _step({"hook_event_name": "SessionStart", "source": "startup"}, 1, delivered=["m-std"], indexed=["m-idx"]),
        # hook injects m-h1; the agent's search shows m-a1, m-x and m-h1 again
        _prompt(5, delivered=["m-h1"], hits=["m-a1", "m-x", "m-h1"], query="a"),
        # the agent does not search (empty query); what it found at line 5 is still in front of it
        _prompt(9, hits=[], query=""),
        # a prompt that should get nothing: noise from both, one prompt each
        _prompt(12, delivered=["m-h2"], hits=["m-a1"], query="b"),
        # a subagent's delivery is in its own context, not this one
        _step({"hook_event_name": "PreToolUse", "agent_id": "x"}, 13, delivered=["m-sub"]),
        _step({"hook_event_name": "PreCompact"}, 14),
        _step({"hook_event_name": "SessionStart", "source": "compact"}, 14),
        # after the compaction nothing searched before counts; no query here
        _prompt(20),
        # an unlabelled prompt's search still counts for later prompts
        _prompt(25, hits=["m-late"], query="c"),
        _prompt(30),
    ]
    results[4].extra["agent_id"] = "x"
    labels = Labels()
    labels.memories = {
        (T, 5): ["m-a1", "m-h1", "m-idx", "m-none"],
        (T, 9): ["m-a1", "m-x"],
        (T, 12): [],
        (T, 20): ["m-a1"],
        (T, 30): ["m-late", "m-sub"],
    }
    queries = {(T, 5): "a", (T, 9): "", (T, 12): "b", (T, 25): "c", (T, 99): "nowhere"}
    run = SessionRun(Timeline(T), results)
    scores = score_queries(labels, {T: run}, queries)

    def row(key: str) -> tuple[int, ...]:
        r = scores[key]
        return (r["expected"], r["reached"], r["reached_at_prompt"], r["shown"], r["shown_relevant"], r["noise"],
                r["noise_prompts"])

    # hook: reached m-h1 + m-idx (index line) at 5; at a prompt only m-h1; shown m-h1, m-h2; m-h2 is noise
    assert row("hook") == (9, 2, 1, 2, 1, 1, 1)
    # agent: m-a1 + m-h1 at 5; m-a1 and m-x at 9 (searched at 5); none at 20 (compacted); m-late at 30 (searched
    # at 25)
    assert row("agent") == (9, 5, 5, 4, 2, 1, 1)
    # both: the union, not the sum — at 5: m-a1, m-h1, m-idx reached, m-h1 + m-a1 at the prompt, 3 shown (m-h1 once)
    assert row("both") == (9, 6, 5, 5, 2, 2, 1)
    assert scores["hook"]["precision"] == 0.5 and scores["agent"]["recall_at_prompt"] == 0.556
    assert (scores["labelled_prompts"], scores["with_query"], scores["empty_queries"], scores["without_query"]) == (
        5, 3, 1, 2)
    assert scores["unmatched"] == [f"{T}#99"]
    assert [(c["line"], c["relevant"], c["missed"]) for c in scores["prompts"]] == [
        (5, ["m-a1", "m-h1"], ["m-idx", "m-none"]), (9, [], []), (12, [], [])]


def test_the_asked_row_counts_the_agents_search_only_where_the_recall_gate_asked_for_one() -> None:
    """What a user of the gate gets: the agent searches where the gate asks (gate/gates/recall/search_first.py);
    at a prompt where it did not ask, the search an annotator wrote is what the agent might have done unasked."""
    asked_here = _prompt(5, delivered=["m-h1"], hits=["m-a1", "m-x"], query="a")
    asked_here.extra["search_asked"] = True
    results = [
        asked_here,
        _prompt(9, hits=["m-b1"], query="b"),  # not asked: its hits count for "both", not for "asked"
        _prompt(12, hits=["m-b2"], query="c"),  # not asked, and should get nothing: noise for "both" only
        _prompt(15),  # unlabelled, not asked: counted among the prompts replayed
    ]
    labels = Labels()
    labels.memories = {(T, 5): ["m-a1", "m-h1"], (T, 9): ["m-b1", "m-a1"], (T, 12): []}
    queries = {(T, 5): "a", (T, 9): "b", (T, 12): "c"}
    scores = score_queries(labels, {T: SessionRun(Timeline(T), results)}, queries)

    def row(key: str) -> tuple[int, ...]:
        r = scores[key]
        return r["expected"], r["reached_at_prompt"], r["shown"], r["shown_relevant"], r["noise"]

    # asked: at 5 m-h1 (hook) and m-a1 (search); at 9 m-a1 still in front of the agent, m-b1 never searched for
    assert row("asked") == (4, 3, 3, 2, 0)
    # both, as if the agent searched everywhere: m-b1 at 9 as well, and m-b2 shown where nothing is expected
    assert row("both") == (4, 4, 5, 3, 1)
    assert (scores["asks"], scores["prompts_replayed"]) == (1, 4)
    # ... and each session's share of them (fitting the ask by owner, the intervals' resampling)
    assert scores["by_session"] == {T: {"asks": 1, "prompts": 4, "asked": [4, 3, 3, 2, 0]}}


# --- through the CLI: the replay runs plain `gate search` against the store as it was ---------------------------

MEMORY = {"kind": "gotcha", "body": "", "tags": [], "paths": [], "links": [],
          "created": "2026-04-01T00:00:00Z", "updated": "2026-04-01T00:00:00Z"}
STORE = [
    {"id": "m-db-01", "title": "Staging database container: pgstage"},
    {"id": "m-db-02", "title": "Staging database container restarts need the data volume mounted first"},
    {"id": "m-db-03", "title": "Staging database container logs are rotated nightly by the cron job"},
    {"id": "m-db-04", "title": "Staging database container user is read only outside the private network"},
    {"id": "m-db-05", "title": "Staging database container listens on its own port, not the default one"},
    {"id": "m-ui-01", "title": "Buttons use the shared design tokens for colours"},
    {"id": "m-db-09", "title": "Staging database container moved",
     "created": "2026-06-01T00:00:00Z", "updated": "2026-06-01T00:00:00Z"},  # written after the session began
]


def _files(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, int]]:
    t = Transcript()
    at = {"p1": t.prompt("ok go ahead")}
    t.say("Done.")
    at["p2"] = t.prompt("now do the same for the other one")
    t.say("Done too.")
    session = t.write(tmp_path / "5e551011-aaaa-bbbb-cccc-000000000001.jsonl")
    store = tmp_path / "store.jsonl"
    store.write_text("".join(json.dumps({**MEMORY, **m}) + "\n" for m in STORE))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(line) + "\n" for line in [
        {"store": "store.jsonl", "transcripts": [session.name]},
        {"transcript": session.name, "prompt": at["p1"], "memories": ["m-db-01"]},
        {"transcript": session.name, "prompt": at["p2"], "memories": ["m-db-01", "m-ui-01"]},
    ]))
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(line) + "\n" for line in [
        {"transcript": session.name, "prompt": at["p1"], "query": "staging database container"},
        {"transcript": session.name, "prompt": at["p2"], "query": ""},
    ]))
    return session, labels, queries, at


def test_the_agents_hits_are_plain_gate_search_top_3_on_the_store_as_it_was(tmp_path: Path, gate: Gate) -> None:
    session, labels, queries, at = _files(tmp_path)
    code, out, err = gate("replay", "--labels", str(labels), "--queries", str(queries), "--steps", "--json")
    assert code == 0, err
    data = json.loads(out)
    prompts = [s for s in data["sessions"][0]["steps"] if s["event"] == "UserPromptSubmit"]
    hits = prompts[0]["agent_hits"]
    assert prompts[0]["agent_query"] == "staging database container" and len(hits) == 3 and "m-db-01" in hits
    assert "m-db-09" not in hits, "a memory written after the session began was found"
    assert prompts[1]["agent_hits"] == []  # an empty query: no search

    # The same query through `gate search` itself, on the store the session began with, gives the same three.
    before = "".join(json.dumps({**MEMORY, **m}) + "\n" for m in STORE if m["id"] != "m-db-09")
    assert gate("import", "-", stdin=before)[0] == 0
    code, out, err = gate("search", "staging", "database", "container", "--limit", "3", "--json")
    assert code == 0, err
    assert hits == [hit["id"] for hit in json.loads(out)["hits"]]

    q = data["scores"]["queries"]
    assert q["agent"]["shown"] == 3 and q["agent"]["shown_relevant"] == 1
    # found at the first prompt, it is still delivered at the second (where the agent did not search)
    assert q["agent"]["reached"] == 2 and q["agent"]["expected"] == 3
    assert q["hook"]["expected"] == data["scores"]["delivery"]["expected"]
    assert q["hook"]["reached"] == data["scores"]["delivery"]["reached"]
    assert q["hook"]["reached_at_prompt"] == data["scores"]["delivery"]["reached_prompt_time"]

    code, text, _ = gate("replay", "--labels", str(labels), "--queries", str(queries))
    assert code == 0
    assert "agent-written queries (top 3 of gate search): 2 of 2 labelled prompts have one (1 empty: no search)" in text
    assert "\nthe agent's queries " in text and "\nboth " in text


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON"),
        ('{"transcript": "s.jsonl", "prompt": 0, "query": "x"}', "line 2: prompt must be a line number"),
        ('{"transcript": "s.jsonl", "prompt": 3}', "line 2: query must be a string"),
        ('{"prompt": 3, "query": "x"}', "line 2: transcript must be a path"),
        ("[1, 2]", "line 2: a query line must be a JSON object"),
    ],
)
def test_bad_query_lines_are_refused_with_their_line(tmp_path: Path, gate: Gate, line: str, message: str) -> None:
    _, labels, _, _ = _files(tmp_path)
    queries = tmp_path / "bad.jsonl"
    queries.write_text('{"transcript": "s.jsonl", "prompt": 1, "query": "x"}\n' + line + "\n")
    code, out, err = gate("replay", "--labels", str(labels), "--queries", str(queries))
    assert code == 2 and message in err and out == ""


def test_queries_need_labels(tmp_path: Path, gate: Gate) -> None:
    _, _, queries, _ = _files(tmp_path)
    code, out, err = gate("replay", str(tmp_path / "5e551011-aaaa-bbbb-cccc-000000000001.jsonl"),
                          "--queries", str(queries))
    assert code == 1 and "--queries needs --labels" in err and out == ""
