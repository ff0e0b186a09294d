"""Near-duplicates caught at write: `gate remember` refuses a fact that restates a live memory, naming it and the
three ways on (exit 4, --json), and lets similar-but-different facts through. Precision and recall are measured
on the pairs of tests/data/near_duplicates.py, through the real check (search + comparison) in a store that also
holds unrelated memories."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import support

sys.path.insert(0, str(Path(__file__).parent / "data"))
from near_duplicates import PAIRS, RESTATEMENT, split

from gate.memory.model import Memory
from gate.memory.store import duplicates
from gate.memory.store.importing import import_lines
from gate.memory.store.store import Store
from gate.paths import ProjectPaths, project_key, user_dirs

BACKGROUND = [
    "The billing cron retries failed charges three times",
    "Feature branches are deleted after merge",
    "The docs site is built with mkdocs material",
    "Sentry releases are tagged with the git sha",
    "Grafana dashboards live in ops/dashboards as JSON",
    "The CSV importer skips rows without an email",
    "Load tests run with k6 against the staging cluster",
    "The changelog is generated from conventional commits",
    "Pre-commit runs ruff and mypy on changed files",
    "Customer support exports tickets every Friday",
]


def _figures(results: list[tuple[str, bool]]) -> dict[str, float | int]:
    tp = sum(1 for kind, caught in results if kind == RESTATEMENT and caught)
    fn = sum(1 for kind, caught in results if kind == RESTATEMENT and not caught)
    fp = sum(1 for kind, caught in results if kind != RESTATEMENT and caught)
    tn = sum(1 for kind, caught in results if kind != RESTATEMENT and not caught)
    return {"pairs": len(results), "restatements": tp + fn, "different": fp + tn, "caught": tp, "missed": fn,
            "false_alarms": fp, "precision": round(tp / (tp + fp), 3) if tp + fp else 0.0,
            "recall": round(tp / (tp + fn), 3) if tp + fn else 0.0}


def _check_in_a_store(root: Path, existing: str, new: str) -> bool:
    """Whether the write-time check, with `existing` and the background in the store, names `existing`."""
    (root / ".git").mkdir(parents=True)
    store = Store(ProjectPaths(root=root, key=project_key(root), dirs=user_dirs()))
    lines = [json.dumps({"id": f"m-bg{n:03d}", "kind": "finding", "title": t}) for n, t in enumerate(BACKGROUND)]
    lines.append(json.dumps({"id": "m-existing", "kind": "finding", "title": existing}))
    import_lines(store, lines)
    matches = duplicates.find(store.index, Memory(id="m-new", kind="finding", title=new))
    assert all(m.id == "m-existing" for m in matches), [m.id for m in matches]  # never a background memory
    return bool(matches)


@pytest.mark.parametrize("part", ["tuning", "held_out"])
def test_precision_and_recall_on_the_pairs(part: str, tmp_path: Path) -> None:
    tuning, held_out = split()
    pairs = tuning if part == "tuning" else held_out
    results = [(kind, _check_in_a_store(tmp_path / f"p{n}", existing, new))
               for n, (kind, existing, new) in enumerate(pairs)]
    figures = _figures(results)
    by_kind = {kind: sum(1 for k, caught in results if k == kind and caught) for kind in {k for k, _ in results}}
    support.report(f"near_duplicates_{part}", {**figures, "refused_by_kind": by_kind})
    # floors below what was measured (README): a change that costs precision or recall shows here
    assert figures["precision"] >= 0.95
    assert figures["recall"] >= 0.9


def test_the_pairs_are_what_the_docstring_says() -> None:
    kinds = [kind for kind, _, _ in PAIRS]
    assert kinds.count(RESTATEMENT) >= 40 and len(kinds) - kinds.count(RESTATEMENT) >= 40
    assert len({(a, b) for _, a, b in PAIRS}) == len(PAIRS)


# --- the refusal, end to end -------------------------------------------------------------------------------------
def test_a_restatement_is_refused_with_the_three_ways_on(gate, project: Path) -> None:
    code, out, _ = gate("remember", "Postgres pool max connections is 50", "--kind", "finding")
    first = out.strip()
    code, out, err = gate("remember", "The postgres pool allows at most 50 connections", "--kind", "finding")
    assert code == 4
    assert (f"looks like {first}: `--supersedes {first}` to replace it, `--link relates:{first}` to keep both "
            "linked, `--new` to keep both") in err
    assert "Postgres pool max connections is 50" in err  # the hint names its title
    assert [m.id for m in Store.for_cwd(str(project)).memories()] == [first]  # nothing written
    code, out, err = gate("remember", "The postgres pool allows at most 50 connections", "--json")
    assert code == 4
    data = json.loads(out)
    assert data["refused"] == "near_duplicate" and [m["id"] for m in data["matches"]] == [first]
    assert 0 < data["matches"][0]["similarity"] <= 1


@pytest.mark.parametrize("way", ["--supersedes", "--link", "--new"])
def test_each_way_on_writes_it(way: str, gate, project: Path) -> None:
    _, out, _ = gate("remember", "Postgres pool max connections is 50", "--kind", "finding")
    first = out.strip()
    extra = {"--supersedes": ["--supersedes", first], "--link": ["--link", f"relates:{first}"], "--new": ["--new"]}
    code, out, err = gate("remember", "The postgres pool allows at most 50 connections", *extra[way])
    assert code == 0, err
    ids = {m.id for m in Store.for_cwd(str(project)).memories()}
    assert ids == {first, out.strip()}


def test_similar_but_different_facts_are_written(gate) -> None:
    code, _, err = gate("remember", "Postgres pool max connections is 50", "--kind", "finding")
    for title in ("Postgres pool max connections is 200", "Redis pool max connections is 50",
                  "Postgres pool min connections is 50"):
        code, out, err = gate("remember", title, "--kind", "finding")
        assert code == 0, (title, err)


def test_forgotten_and_superseded_memories_are_not_matched(gate) -> None:
    _, out, _ = gate("remember", "Search results are cached for 5 minutes in Redis")
    old = out.strip()
    code, out, err = gate("remember", "Search results are cached for 15 minutes in Redis", "--supersedes", old)
    assert code == 0, err
    new = out.strip()
    code, _, err = gate("remember", "Redis caches search results for 5 minutes")  # restates the superseded one
    assert code == 0, err
    assert gate("forget", new)[0] == 0
    code, _, err = gate("remember", "Redis caches the search results for 15 minutes")  # restates a forgotten one
    assert code == 0, err


def test_memories_of_another_project_are_not_matched(gate, project: Path, tmp_path: Path) -> None:
    """Each project has its own store, so the filter is reached only by another project's private memory whose
    file sits in this project's store (copied by hand, restored into the wrong place): the same file under
    this project's name is refused, under the other project's name it is not."""
    import shutil

    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    existing = "Staging deploys require approval from the release manager"
    restated = "A deploy to staging needs the release manager's approval"
    code, out, err = gate("remember", existing, "--project", str(other))
    assert code == 0, err
    theirs = Store.for_cwd(str(other)).locate(out.strip())
    here = Path(ProjectPaths.for_cwd(project).private_store)
    here.mkdir(parents=True, exist_ok=True)
    # the same memory, as this project's own: a restatement, refused
    mine = here / theirs.name
    ours, others = ProjectPaths.for_cwd(project).key, ProjectPaths.for_cwd(other).key
    mine.write_text(theirs.read_text().replace(f'project = "{others}"', f'project = "{ours}"'))
    assert f'project = "{ours}"' in mine.read_text()
    code, _, err = gate("remember", restated, "--json")
    assert code == 4, err
    # the other project's file, as it came: not this project's memory, so no refusal
    shutil.copyfile(theirs, mine)
    code, _, err = gate("remember", restated)
    assert code == 0, err


def test_compare_names_why_two_facts_differ() -> None:
    assert duplicates.compare("Gunicorn runs 4 workers per pod", "Gunicorn runs 8 workers per pod").distinct == \
        "other numbers"
    assert duplicates.compare("Use ROUND_HALF_EVEN in totals", "Use ROUND_HALF_UP in totals").distinct == \
        "other identifiers"
    assert duplicates.compare("The cache is enabled in staging", "The cache is disabled in staging").distinct == \
        "contrasting words"
    assert duplicates.compare("Run migrations in a transaction", "Never run migrations in a transaction").distinct \
        == "one is negated"
    same = duplicates.compare("Feature flags are only read at boot", "Feature flags are read once at boot time only")
    assert same.distinct == "" and same.similarity >= 0.7


def test_an_aside_that_negates_a_detail_does_not_make_two_facts(gate) -> None:
    """Issue 44: "(no RETURNING)" read as a negation of the whole statement let this restatement through. A
    negation in brackets negates the statement only when the other title speaks of the aside."""
    code, out, err = gate("remember", "We use SQLite in dev and Postgres in prod; keep SQL portable (no RETURNING)")
    assert code == 0, err
    first = out.strip()
    code, out, err = gate("remember", "Use SQLite in dev and Postgres in prod, keep SQL portable")
    assert code == 4, (code, out, err)
    assert f"looks like {first}" in err and "nothing was written" in err
    # the aside counts when the other side says something of it
    assert duplicates.compare("Retry uploads (no backoff) on 503", "Retry uploads with backoff on 503").distinct \
        == "one is negated"
    assert duplicates.compare("Run migrations in a transaction (never in autocommit)",
                              "Run migrations in autocommit").distinct == "one is negated"
