"""A plain `gate search` admits a memory only when it holds [cut] min_matched_terms of the query's terms (all of
a shorter query's): one shared word of several is mostly coincidence. The recall gate's own search keeps its
floor (min_z) and ignores the rule."""

from __future__ import annotations

import json

from gate.memory.search import search
from gate.memory.store.store import Store
from gate.paths import ProjectPaths
from gate.rules import load_rules

ROUNDING = "Invoice totals use banker's rounding at two decimals"
INVOICE_ONLY = "Invoice numbers restart every fiscal year"
UNRELATED = "Deploys need approval from the release manager"


def _store(gate) -> dict[str, str]:
    ids = {}
    for title in (ROUNDING, INVOICE_ONLY, UNRELATED):
        code, out, err = gate("remember", title)
        assert code == 0, err
        ids[title] = out.strip()
    return ids


def _shown(out: str) -> list[str]:
    return [line.split(" · ")[0] for line in out.splitlines() if line.startswith("m-")]


def test_the_rule_ships_at_two() -> None:
    assert int(load_rules("search")["cut"]["min_matched_terms"]) == 2


def test_a_memory_sharing_one_word_of_several_is_left_out_and_counted(gate) -> None:
    ids = _store(gate)
    code, out, _ = gate("search", "invoice", "rounding")
    assert code == 0
    assert _shown(out) == [ids[ROUNDING]]
    assert "1 more match holding fewer than 2 of the words: `--all` shows it" in out

    code, out, _ = gate("search", "--all", "invoice", "rounding")
    assert code == 0
    assert _shown(out) == [ids[ROUNDING], ids[INVOICE_ONLY]]
    assert f"{ids[INVOICE_ONLY]} · " in out and "[holds 1 of the words]" in out
    assert "fewer than" not in out  # nothing is hidden any more

    data = json.loads(gate("search", "--json", "invoice", "rounding")[1])
    assert [hit["id"] for hit in data["hits"]] == [ids[ROUNDING]]
    assert data["hidden"]["few_terms"] == 1
    data = json.loads(gate("search", "--json", "--all", "invoice", "rounding")[1])
    assert {hit["id"] for hit in data["hits"] if hit.get("few_terms")} == {ids[INVOICE_ONLY]}


def test_a_one_word_query_needs_that_word_only(gate) -> None:
    ids = _store(gate)
    # A plain search (the rule on): one word asked, one word needed — each memory holding it is shown.
    code, out, _ = gate("search", "invoice")
    assert code == 0
    assert set(_shown(out)) == {ids[ROUNDING], ids[INVOICE_ONLY]}, out
    assert "fewer than" not in out and "no memories hold" not in out, out
    data = json.loads(gate("search", "--json", "invoice")[1])
    assert {hit["id"] for hit in data["hits"]} == {ids[ROUNDING], ids[INVOICE_ONLY]}
    assert data["hidden"]["few_terms"] == 0
    code, out, _ = gate("search", "--limit", "10", "--all", "invoice")
    assert code == 0
    assert set(_shown(out)) == {ids[ROUNDING], ids[INVOICE_ONLY]}
    assert "[holds" not in out


# Memories where the best-scoring match holds one word of two ("reconciliation", short, in its title and cues),
# and the one holding both says them once each in a long body: it scores under half of the other.
RECONCILE_ONLY = ("Reconciliation batches retry three times", "--cues", "reconciliation retries")
BOTH_WORDS = ("The nightly export waits for the partner files", "--body",
              "It reads the ledger only after the reconciliation, once the partner files of every region have "
              "arrived and were checked against the bank statements, the currency tables were refreshed, and the "
              "nightly audit of the payment providers finished without a warning.")
LEDGER_ONLY = ("Ledger entries are immutable", "Ledger totals round half-even", "Ledger ids are UUIDv7")


def test_the_cliff_is_measured_from_the_best_hit_the_term_rule_keeps(gate, project) -> None:
    """A hit the term rule leaves out (one word of two) sets no cliff: measured from it, the memory holding both
    words would fall below the cliff and the search would show nothing at all."""
    few = gate("remember", *RECONCILE_ONLY)[1].strip()
    both = gate("remember", *BOTH_WORDS)[1].strip()
    for title in LEDGER_ONLY:
        assert gate("remember", title)[0] == 0
    store = Store(ProjectPaths.for_cwd(project))
    store.catch_up()
    rules = load_rules("search", store.paths.root)
    unruled = search(store.index, "reconciliation ledger",
                     rules={**rules, "cut": {**rules["cut"], "cliff_ratio": 0.0, "min_matched_terms": 1}})
    scores = {hit.id: hit.score for hit in unruled.hits}
    ratio = float(rules["cut"]["cliff_ratio"])
    assert scores[both] < ratio * scores[few], scores  # the case: below the cliff were it measured from `few`
    result = search(store.index, "reconciliation ledger", rules=rules)
    assert [hit.id for hit in result.hits] == [both]
    assert result.top_score == scores[both] and result.cliff == ratio * scores[both]
    code, out, _ = gate("search", "reconciliation", "ledger")
    assert code == 0 and _shown(out) == [both], out
    assert "below the relevance cliff" not in out, out
    code, out, _ = gate("search", "--all", "reconciliation", "ledger")
    assert code == 0 and f"{both} · " in out and f"{few} · " in out, out
    assert "[below the cliff]" not in out, "--all marks the cliff as a plain search measures it"


def test_no_memory_holding_enough_words_says_what_it_left_out(gate) -> None:
    _store(gate)
    code, out, _ = gate("search", "invoice", "timezone")
    assert code == 0
    assert out.strip() == "no memories hold 2 of the words; 2 hold fewer: `--all` shows them"
    code, out, _ = gate("search", "kubernetes", "timezone")
    assert out.strip() == "no memories match"


def test_a_successor_found_through_the_words_of_what_it_supersedes_stays(gate, project) -> None:
    old = gate("remember", "Invoice rounding is half-up at two decimals")[1].strip()
    new = gate("remember", "Totals use banker's rules now", "--supersedes", old)[1].strip()
    code, out, _ = gate("search", "invoice", "rounding")
    assert code == 0
    assert _shown(out) == [new]


def test_the_recall_gates_search_ignores_the_rule(gate, project) -> None:
    ids = _store(gate)
    store = Store(ProjectPaths.for_cwd(project))
    store.catch_up()
    rules = load_rules("search", store.paths.root)
    rules = {**rules, "cut": {**rules["cut"], "cliff_ratio": 0.0}}  # the term rule alone
    plain = search(store.index, "invoice rounding", rules=rules)
    # A z floor in a store too small for one: the cliff decides, as in the recall gate's small stores.
    hooked = search(store.index, "invoice rounding", rules=rules, min_z=0.0, small_store=100)
    assert [hit.id for hit in plain.hits] == [ids[ROUNDING]]
    assert ids[INVOICE_ONLY] in [hit.id for hit in hooked.hits]
