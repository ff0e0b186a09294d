"""A top 3 worth reading (issue 29): restatements of one fact do not crowd out a memory that says something else."""

from __future__ import annotations

from pathlib import Path

from gate.memory.model import Memory
from gate.memory.search import diversify, search
from gate.memory.store.store import Store

RESTATEMENTS = [
    "Staging database is Postgres on port 5433 in the staging container",
    "The staging container runs the Postgres database on port 5433",
    "Postgres for staging listens on port 5433 inside the staging container",
]
OTHER = "Staging deploys need the VPN before the database migration runs"


def _store(project: Path) -> Store:
    store = Store.for_cwd(str(project))
    for number, title in enumerate(RESTATEMENTS, start=1):
        store.remember(Memory(id=f"m-same-{number}", kind="reference", title=title,
                              body="staging database postgres port 5433 container"))
    store.remember(Memory(id="m-other", kind="gotcha", title=OTHER))
    for number, title in enumerate(["Billing exports run nightly", "Lint runs in each package",
                                    "The docs build with mkdocs", "Feature flags live in flags.yaml"], start=1):
        store.remember(Memory(id=f"m-filler-{number}", kind="finding", title=title))
    store.catch_up()
    return store


def test_a_third_restatement_waits_behind_a_memory_that_says_something_else(project: Path) -> None:
    store = _store(project)
    plain = search(store.index, "staging database postgres port container",
                   rules={"boost": {"title": 2.5, "body": 1.0}, "cut": {"cliff_ratio": 0.0}})
    assert {h.id for h in plain.hits[:3]} == {"m-same-1", "m-same-2", "m-same-3"}  # BM25 alone: all three first
    result = search(store.index, "staging database postgres port container", limit=3)
    top = [h.id for h in result.hits]
    assert "m-other" in top
    assert sum(1 for memory_id in top if memory_id.startswith("m-same-")) == 2
    over = [c for c in result.candidates if c.id.startswith("m-same-") and c.id not in top]
    assert len(over) == 1 and over[0].disposition == "OVER_CAP"


def test_off_and_unlike_hits_keep_their_order(project: Path) -> None:
    store = _store(project)
    ranked = search(store.index, "staging database postgres port container", limit=8,
                    rules={"boost": {"title": 2.5, "body": 1.0}, "cut": {"cliff_ratio": 0.0}}).hits
    assert diversify(ranked, {"restatements": 0}) == ranked
    unlike = [h for h in ranked if not h.id.startswith("m-same-")]
    assert diversify(unlike, {"restatements": 2, "similarity": 0.6}) == unlike
