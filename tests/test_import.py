"""`gate import`: every refused line is named (nothing imported); `--skip-refused` imports the rest and reports
what it skipped. (`--replace`, import over an existing id, is in tests/test_history.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from gate.memory.store.store import Store

GOOD_AND_BAD = [
    {"id": "m-good1", "kind": "finding", "title": "Local database runs in docker compose",
     "body": "postgresql://payments:payments@localhost:5433/payments"},  # a local credential: accepted
    {"id": "m-bad01", "kind": "finding", "title": "Prod database", "body": "postgres://app:Xk93jfkdP2qq@db.prod/app"},
    {"id": "m-good2", "kind": "finding", "title": "Queue lives on rabbitmq"},
]


def jsonl(lines: list) -> str:
    return "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)


def test_import_names_every_refused_line_and_imports_nothing(gate, project: Path) -> None:
    lines = [
        *GOOD_AND_BAD,
        {"id": "m-bad02", "kind": "nonsense", "title": "Unknown kind"},
        {"id": "m-bad03", "kind": "finding", "title": "Staging key", "body": "STRIPE_KEY=sk_live_" + "a1B2" * 6},
    ]
    code, out, err = gate("import", "-", stdin=jsonl(lines))
    assert code == 2
    for number in (2, 4, 5):
        assert f"line {number}:" in err
    assert "line 1:" not in err and "line 3:" not in err
    assert "a1B2a1B2" not in err  # the refusal names the pattern, never the secret
    assert "--skip-refused" in err
    assert Store.for_cwd(str(project)).memories() == []


def test_import_skip_refused_imports_the_rest_and_reports_what_it_skipped(gate, project: Path) -> None:
    lines = [
        *GOOD_AND_BAD,
        # links to a refused line: refused in turn, not written with a dangling link
        {"id": "m-link1", "kind": "fix", "title": "Prod database moved",
         "links": [{"type": "fixes", "target": "m-bad01"}]},
        "not json at all",
    ]
    code, out, err = gate("import", "-", "--skip-refused", "--json", stdin=jsonl(lines))
    assert code == 1, err  # the rest was imported; the status says lines were refused
    report = json.loads(out)
    assert sorted(report["ids"]) == ["m-good1", "m-good2"]
    assert [s["line"] for s in report["skipped"]] == [2, 4, 5]
    assert "secret" in report["skipped"][0]["error"] and "m-bad01" in report["skipped"][1]["error"]
    assert sorted(m.id for m in Store.for_cwd(str(project)).memories()) == ["m-good1", "m-good2"]
    code, out, err = gate("import", "-", "--skip-refused", stdin=jsonl(lines[1:2]))
    assert code == 1 and "skipped stdin, line 1:" in out and "imported 0 memories" in out


def test_an_import_leaves_the_cue_table_level_with_the_store(gate, project: Path) -> None:
    """The work an import leaves belongs to the import: the first hook after it finds the cue table current
    (a table built when the store was small was rebuilt inline by the first hook: 11.6 s after 20,000)."""
    from gate.memory.cues import shards
    from gate.paths import ProjectPaths
    from gate.rules import load_rules

    paths = ProjectPaths.for_cwd(project)
    defaults = shards.defaults_from(load_rules("triggers", project))
    lines = [{"id": f"m-cue{n:03d}", "kind": "gotcha", "title": f"Gotcha {n} of the db layer", "paths": ["src/db/**"]}
             for n in range(3)]
    code, out, err = gate("import", "-", stdin=jsonl(lines))
    assert code == 0, err
    head = json.loads((Path(shards.table_dir(paths)) / "head.json").read_text(encoding="utf-8"))
    assert head["files"] == 3
    assert sorted(m for m, _, _ in shards.Table(paths, head).path_triggers("src/db/x.py")) == [
        "m-cue000", "m-cue001", "m-cue002"]
    assert head["defaults"] == defaults


def test_the_import_sentence_counts_one_memory_in_the_singular(gate, project: Path) -> None:
    line = {"id": "m-one01", "kind": "fix", "title": "Retry the upload twice"}
    code, out, err = gate("import", "-", stdin=jsonl([line]))
    assert code == 0, err
    assert "imported 1 memory" in out and "1 memories" not in out
