"""The recall gate's floor: a BM25 score standardised over the store's scores for the query (memories matching
nothing count 0). The hook estimates the mean and spread from the top candidates, the number of matching
memories and the store's size (gate/memory/search.py spread()); here it is measured against the exact
statistics, over every memory's score, on a store of real size (the dev split's 73-memory store, our words)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.memory.search import search, spread, standardise
from gate.memory.store.importing import import_lines
from gate.memory.store.store import Store
from gate.textproc import terms

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "eval" / "stores" / "Jason-liu-0219+my-claude.jsonl"


def _exact(scores: list[float], docs: int) -> tuple[float, float]:
    full = scores + [0.0] * (docs - len(scores))
    mean = sum(full) / docs
    return mean, (sum((s - mean) ** 2 for s in full) / docs) ** 0.5


def test_spread_is_exact_when_every_match_is_a_candidate() -> None:
    scores = [7.5, 3.0, 2.0, 0.5]
    mean, std = spread(scores, len(scores), 20)
    assert (round(mean, 9), round(std, 9)) == tuple(round(v, 9) for v in _exact(scores, 20))
    assert standardise(7.5, (mean, std)) > 3.0  # one memory far above the rest of a 20-memory store


def test_spread_estimates_the_unseen_matches_between_zero_and_the_lowest_candidate() -> None:
    top = [9.0, 6.0, 4.0]
    mean, std = spread(top, 103, 1000)  # 100 more matches, each taken as uniform on (0, 4]
    assert mean == pytest.approx((19.0 + 100 * 2.0) / 1000)
    assert std == pytest.approx(((81 + 36 + 16 + 100 * 16 / 3) / 1000 - mean * mean) ** 0.5)
    assert spread([], 0, 10) == (0.0, 0.0) and standardise(1.0, (0.0, 0.0)) == 0.0


@pytest.fixture
def real_store(project: Path) -> Store:
    store = Store.for_cwd(project)
    lines = [json.dumps({**json.loads(line), "project": store.paths.root})
             for line in STORE.read_text(encoding="utf-8").splitlines() if line.strip()]
    import_lines(store, lines, source_name=str(STORE))
    store.reindex()
    return store


def _queries() -> list[list[str]]:
    """Prompt-like queries from the store's own text: each memory's title (a short query), and a title with
    another memory's body (a long one, like a prompt with the reply it answers)."""
    memories = [json.loads(line) for line in STORE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for number, memory in enumerate(memories):
        out.append(list(dict.fromkeys(terms(memory["title"])))[:8])
        other = memories[(number * 7 + 3) % len(memories)]
        out.append(list(dict.fromkeys(terms(f"{memory['title']} {other['body']}")))[:32])
    return [q for q in out if q]


def test_the_estimate_fires_on_the_same_memories_as_the_exact_statistics(real_store: Store) -> None:
    index = real_store.index
    same = differ = fired = silent = 0
    for query in _queries():
        for floor in (2.0, 2.5, 3.0, 4.5, 6.0):
            estimated = search(index, "", terms=query, limit=3, min_z=floor, related=False)
            exact = search(index, "", terms=query, limit=3, min_z=floor, related=False, exact=True)
            a, b = [h.id for h in estimated.hits], [h.id for h in exact.hits]
            same += a == b
            differ += a != b
            fired += bool(b)
            silent += not b
    assert fired > 50 and silent > 10, (fired, silent)  # floors where the gate fires and where it stays silent
    # docs/recall.md: 0 of 730 (query, floor) decisions differ (measured; it allowed 3 % before)
    assert (same + differ, differ) == (730, 0), (same, differ)


def test_the_floor_counts_only_this_projects_live_memories(project: Path, tmp_path: Path) -> None:
    """The z-score's mean and spread are over this project's live store: another project's memories and a
    superseded one (its successor stands for it) are no memories of it, matching or not."""
    from gate.memory.model import Link, Memory
    from gate.memory.store.files import write_memory
    from gate.paths import ProjectPaths

    paths = ProjectPaths.for_cwd(project)
    private = Path(paths.private_store)
    other = str(tmp_path / "other")
    words = ["amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"]
    for n, word in enumerate(words * 2):
        write_memory(private, Memory(id=f"m-own-{n}", kind="finding", project=paths.root,
                                     title=f"The {word} report lists column {n} first"), private=True)
    write_memory(private, Memory(id="m-hit", kind="finding", project=paths.root,
                                 title="Checkout service times out under load"), private=True)
    write_memory(private, Memory(id="m-old", kind="finding", project=paths.root, status="superseded",
                                 title="Checkout service times out under load on Mondays"), private=True)
    write_memory(private, Memory(id="m-new", kind="finding", project=paths.root,
                                 title="Checkout service times out when the pool is small",
                                 links=[Link("supersedes", "m-old")]), private=True)
    for n in range(4):
        write_memory(private, Memory(id=f"m-far-{n}", kind="finding", project=other,
                                     title=f"Checkout service times out under load in region {n}"), private=True)
    store = Store.for_cwd(project)
    store.reindex()
    query = ["checkout", "service", "times", "load"]
    result = search(store.index, "", terms=query, limit=3, min_z=2.5, related=False, exact=True)
    assert result.spread is not None
    by_id = {c.id: c for c in result.candidates}
    assert by_id["m-far-0"].disposition == "OTHER_PROJECT" and by_id["m-old"].disposition.startswith("SUPERSEDED")
    live = {h.id: h.score for h in result.hits}
    live.update({c.id: c.score for c in result.candidates if c.id in ("m-hit", "m-new")})
    live["m-new"] = max(live["m-new"], by_id["m-old"].score)  # the successor stands for the superseded one
    # 22 live memories of this project: the 20 reports, m-hit and m-new; two of them match
    expected = spread(sorted(live.values(), reverse=True), 2, 22)
    assert result.spread == pytest.approx(expected)


def test_memories_that_match_nothing_do_not_raise_the_z_score(project: Path) -> None:
    """rules/recall.toml [fire] zero_scores: counted all, the memories a query does not match make every match's
    z-score grow with the store (one memory alone matching a word stands at sqrt(N - 1)), so a coincidence that
    stays under the floor in a small store passes it in a big one; with at most `zero_scores` of them counted, a
    store grown by memories about other things delivers what it delivered before."""
    from gate.memory.model import Memory
    from gate.memory.store.files import write_memory
    from gate.paths import ProjectPaths

    paths = ProjectPaths.for_cwd(project)
    private = Path(paths.private_store)

    def add(memory_id: str, title: str) -> None:
        write_memory(private, Memory(id=memory_id, kind="finding", project=paths.root, title=title), private=True)

    add("m-answer", "The reserve account fills before any distribution when the waterfall trigger fires")
    add("m-near", "The reserve trigger counts missed payments after the due date")
    add("m-coincidence", "Distribution builds are published from the release branch")
    for n in range(12):
        add(f"m-other-{n}", f"Report column {n} is sorted by region first")
    query = list(dict.fromkeys(terms("reserve account waterfall trigger distribution")))
    floor = 2.25

    def passing(zero_scores: int) -> tuple[list[str], dict[str, float]]:
        store = Store.for_cwd(project)
        store.reindex()
        result = search(store.index, "", terms=query, limit=3, min_z=floor, related=False, exact=True,
                        small_store=0, attainable=1.0, zero_scores=zero_scores)
        z = {h.id: round(h.z, 6) for h in result.hits}
        z.update({c.id: round(c.z, 6) for c in result.candidates if c.z is not None})
        return [h.id for h in result.hits], z

    small_capped, small_z = passing(15)
    small_all, _ = passing(0)
    assert "m-answer" in small_capped and "m-coincidence" not in small_capped and small_all == small_capped
    for n in range(400):  # the store grows by memories about other things, none of them naming the query's words
        add(f"m-more-{n}", f"Label {n} of the legend uses the palette of chart {n % 17}")
    big_capped, big_z = passing(15)
    big_all, big_all_z = passing(0)
    # Unrelated memories change what passes not at all, and the z-scores only as far as BM25's idf moves
    assert big_capped == small_capped
    assert all(abs(big_z[i] - small_z[i]) < 0.5 for i in ("m-answer", "m-near", "m-coincidence")), (small_z, big_z)
    assert big_z["m-coincidence"] < floor
    assert "m-coincidence" in big_all  # counted all, the same coincidence now passes the floor
    assert big_all_z["m-coincidence"] > floor + 1 > floor > small_z["m-coincidence"]
