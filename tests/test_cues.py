"""Cue words written at write time: how someone would ask about a memory, stored in its TOML, indexed in a field
of their own (boosted by rules/search.toml), found by the search the recall hook runs, editable, explained by
`gate search --explain`, and carried by export and import."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from gate.memory.store.store import Store

FACT = "PgBouncer runs in transaction pooling mode"
CUES = "prod is out of db connections, too many clients already"


def remember(gate, *args: str) -> str:
    code, out, err = gate("remember", *args)
    assert code == 0, err
    return out.strip()


def hits(gate, *query: str) -> list[dict]:
    code, out, err = gate("search", *query, "--json")
    assert code == 0, err
    return json.loads(out)["hits"]


def test_cues_are_stored_and_find_what_the_fact_does_not_say(gate, project: Path) -> None:
    memory_id = remember(gate, FACT, "--kind", "finding", "--cues", CUES)
    remember(gate, "Postgres max_connections is 400 on the primary", "--kind", "finding")
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert tomllib.loads(path.read_text())["cues"] == CUES
    found = hits(gate, "we are out of db connections in prod")
    assert found[0]["id"] == memory_id
    assert {"prod", "connect"} <= set(found[0]["matched"])  # cue terms count as matched terms (the hook's floor)
    assert hits(gate, "too many clients") and hits(gate, "too many clients")[0]["id"] == memory_id


def test_without_cues_the_paraphrase_finds_nothing(gate) -> None:
    remember(gate, FACT, "--kind", "finding")
    assert hits(gate, "too many clients already") == []


def test_the_hook_finds_a_memory_by_its_cues(gate, hook, project: Path) -> None:
    memory_id = remember(gate, "Cloud Armor rate limits /api/cart per client IP", "--kind", "finding",
                         "--cues", "customers get 429 on the cart, too many requests from one ISP")
    event = {"session_id": "cues", "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": "UserPromptSubmit",
             "prompt": "customers from one ISP in italy get 429 on the cart, what is blocking them?"}
    out, code = hook(event)
    assert code == 0
    assert memory_id in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_edit_replaces_and_adds_cues_and_keeps_the_previous_version(gate) -> None:
    memory_id = remember(gate, FACT, "--kind", "finding")
    code, out, err = gate("edit", memory_id, "--cues", "out of db connections")
    assert code == 0, err
    assert hits(gate, "out of db connections")[0]["id"] == memory_id
    code, out, err = gate("edit", memory_id, "--add-cues", "prepared statement does not exist")
    assert code == 0, err
    code, out, _ = gate("show", memory_id, "--json")
    assert json.loads(out)["cues"] == "out of db connections; prepared statement does not exist"
    assert hits(gate, "prepared statement does not exist")[0]["id"] == memory_id
    code, out, _ = gate("edit", memory_id, "--add-cues", "")
    assert code == 0 and "no change" in out
    code, out, _ = gate("show", "--history", memory_id, "--json")
    assert [v["memory"]["cues"] for v in json.loads(out)["versions"]] == ["", "out of db connections"]
    code, out, _ = gate("edit", memory_id, "--cues", "")
    assert code == 0
    assert hits(gate, "prepared statement does not exist") == []


def test_search_explain_names_the_field_and_terms_of_each_hit(gate) -> None:
    by_cue = remember(gate, FACT, "--kind", "finding", "--cues", "out of db connections")
    by_title = remember(gate, "Connections to the analytics replica are read only", "--kind", "finding")
    # by_title holds one of the query's two terms: a plain search leaves it out (min_matched_terms), --all shows it
    code, out, err = gate("search", "out of db connections", "--json")
    assert code == 0, err
    assert [hit["id"] for hit in json.loads(out)["hits"]] == [by_cue]
    code, out, err = gate("search", "out of db connections", "--explain", "--json", "--all")
    assert code == 0, err
    explained = {hit["id"]: hit["explain"]["fields"] for hit in json.loads(out)["hits"]}
    assert set(explained[by_cue]["cues"]) == {"db", "connect"}
    assert "title" not in explained[by_cue]
    assert set(explained[by_title]) == {"title"} and set(explained[by_title]["title"]) == {"connect"}
    assert all(score > 0 for fields in explained.values() for terms in fields.values() for score in terms.values())
    code, out, err = gate("search", "out of db connections", "--explain", "--all")
    assert code == 0 and "terms: db connect" in out
    assert "cues [" in out and "title [connect" in out


def test_cues_survive_export_and_import(gate, project: Path) -> None:
    memory_id = remember(gate, FACT, "--kind", "finding", "--cues", CUES)
    code, exported, _ = gate("export")
    assert json.loads(exported)["cues"] == CUES
    Store.for_cwd(str(project)).locate(memory_id).unlink()
    assert hits(gate, "too many clients already") == []
    code, out, err = gate("import", "-", stdin=exported)
    assert code == 0, err
    assert [h["id"] for h in hits(gate, "too many clients already")] == [memory_id]
    code, again, _ = gate("export")
    assert again == exported


def test_cues_are_checked_for_secrets_and_length(gate, project: Path) -> None:
    code, _, err = gate("remember", FACT, "--cues", "password: Xk93jfkdP2qqA8bZr4Tw")
    assert code == 2 and "cues" in err and "secret" in err
    code, _, err = gate("remember", FACT, "--cues", "word " * 300)
    assert code == 2 and "at most 1000" in err
    assert Store.for_cwd(str(project)).memories() == []
